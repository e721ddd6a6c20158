GO ?= go

.PHONY: all deps test vet fmt-check demo curator-peer

all: test

# Installs ZooKeeper and Apache Curator from Debian's packages when they are missing
# (as root), else does nothing.
deps:
	@scripts/deps.sh zookeeper curator

# Apache Curator's recipes behind a small Java program of ours, compiled against
# Debian's jars: the interop tests' partner and the benchmarks' yardstick.
CURATOR_CP := /usr/share/java/curator-recipes.jar
curator-peer: deps build/curator-peer/CuratorPeer.class

build/curator-peer/CuratorPeer.class: bench/curator-peer/CuratorPeer.java
	@mkdir -p build/curator-peer
	javac -d build/curator-peer -cp $(CURATOR_CP) $<

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# What CI runs: formatting, vet, then every test with the race detector against real
# ZooKeeper servers.
test: deps curator-peer fmt-check vet
	$(GO) test -race -count=1 -timeout 12m ./...

# The main job, on a throwaway local ZooKeeper (or ZK_SERVERS): three scheduler
# replicas elect one poller, the poller's session is expired and another takes
# over, then five workers count under a lock.
demo:
	@scripts/deps.sh zookeeper
	$(GO) run ./examples/scheduler
