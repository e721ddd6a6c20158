GO ?= go

.PHONY: all deps test vet fmt-check demo

all: test

# Installs ZooKeeper from Debian's packages when it is missing (as root), else does nothing.
deps:
	@scripts/deps.sh zookeeper

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# What CI runs: formatting, vet, then every test with the race detector against real
# ZooKeeper servers.
test: deps fmt-check vet
	$(GO) test -race -count=1 -timeout 12m ./...

# The main job, on a throwaway local ZooKeeper (or ZK_SERVERS): three scheduler
# replicas elect one poller, the poller's session is expired and another takes
# over, then five workers count under a lock.
demo: deps
	$(GO) run ./examples/scheduler
