GO ?= go

.PHONY: all deps test vet staticcheck fmt-check demo curator-peer fuzz chaos soak oldest-go bench-scale

all: test

# Installs ZooKeeper 3.8, Apache Curator 5.4 (with discovery) and kazoo (the partition
# benchmark's peer, whose smoke test runs in make test), Chromium (zkr ui's browser
# tests), Prometheus's promtool (the alert rules' tests) and MIT Kerberos's KDC (zktest's
# throwaway KDC for the Kerberos servers' tests) from Debian's packages when
# they are missing (as root), and unpacks ZooKeeper 3.9.6 and Curator 5.7.1 from Debian
# forky into build/deps/forky (nothing installed); else does nothing. Trixie's 3.9.3
# loses acknowledged writes (ZOOKEEPER-4925, docs/servers.md) and no default run uses
# it: `scripts/deps.sh trixie` unpacks it beside forky's, for ZKTEST_ZOOKEEPER=3.9.3.
deps:
	@scripts/deps.sh zookeeper curator curator-discovery kazoo chromium prometheus kerberos forky

# Apache Curator's recipes behind a small Java program of ours, compiled against
# Debian's jars: the interop tests' partner and the benchmarks' yardstick. Built
# twice: against bookworm's Curator 5.4 (ZooKeeper 3.8's client) and forky's 5.7.1
# (3.9.6's), each into build/curator-peer/<version> with the class path it runs with
# in a file beside it (read by internal/zkrtest and bench/). ZKTEST_CURATOR=5.4|5.7
# chooses which the tests run; the default is 5.7. Forky's jars name bookworm's in
# their manifests, and the JVM searches those right after the jar that names them, so
# every jar comes after the ones it needs: jute, ZooKeeper, then Curator's.
J := /usr/share/java
F := $(CURDIR)/build/deps/forky/root/usr/share/java
CURATOR_JARS := zookeeper-jute zookeeper curator-client curator-framework curator-recipes curator-x-discovery
CURATOR_CP_5.4 := $(subst $(eval) ,:,$(CURATOR_JARS:%=$(J)/%.jar)):$(J)/slf4j-nop.jar
CURATOR_CP_5.7 := $(subst $(eval) ,:,$(CURATOR_JARS:%=$(F)/%.jar)):$(J)/slf4j-nop.jar
curator-peer: deps build/curator-peer/5.4/CuratorPeer.class build/curator-peer/5.7/CuratorPeer.class

build/curator-peer/%/CuratorPeer.class: $(wildcard bench/curator-peer/*.java) Makefile
	@mkdir -p $(@D)
	javac -d $(@D) -cp $(CURATOR_CP_$*) $(filter %.java,$^)
	@echo '$(CURATOR_CP_$*)' >$(@D)/classpath

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# bench/ is a module of its own, so that its plotting library stays out of the
# library's module graph, as is examples/metrics, for OpenTelemetry's SDK and
# Prometheus exporter, and cmd/zkr/uitest, for the browser driver (chromedp); every
# target that covers the code covers them too.
vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd examples/metrics && $(GO) vet ./...
	cd cmd/zkr/uitest && $(GO) vet ./...

# What CI runs: formatting, vet, the oldest Go's build and unit tests (oldest-go),
# every test with the race detector against real ZooKeeper 3.9.6 servers and Curator
# 5.7.1, a short chaos run (its report printed); then again on ZooKeeper 3.8 with
# Curator 5.4, the tests of what differs between the versions: the interop with
# Curator 5.4, ACLs and TLS (OLD_INTEGRATION_TESTS), the followers' watch, fault and
# Curator tests (OLD_RECIPE_TESTS: on 3.8 persistent watches are heard otherwise), the
# framework's server-facing calls (OLD_FRAMEWORK_TESTS), and the chaos run, which puts
# the locks, election, counter, shared values, nodes and followers under faults; then
# a short run of every fuzz target.
# TestVersions starts each part by naming the versions, as the server and the Curator
# peer report them. The fuzz run is a count of inputs, not a time: a race in Go 1.26's
# fuzz coordinator can fail a run that ends on its deadline while a worker is busy
# ("context deadline exceeded"), which a loaded machine makes likely.
NEW := ZKTEST_ZOOKEEPER=3.9 ZKTEST_CURATOR=5.7
OLD := ZKTEST_ZOOKEEPER=3.8 ZKTEST_CURATOR=5.4
# The cache follows a tree on one persistent recursive watch, and 3.8 files and fires
# those otherwise than 3.9 (no zxid in a notification, a watch in both tables): the
# cache's tests of what it hears, and every recipe test named for watches (the
# cache's, the group's, the partitioner's).
# Only the recipes that follow state ride on those watches: the lock recipes (barrier,
# counter, election, mutex, nodes, rwlock, semaphore) send the same requests to both
# versions, and the 3.8 chaos run puts them (but the barrier) under faults.
OLD_RECIPE_TESTS := Fault|Expir|Restart|Cut|Lost|Stopped|Curator|Abandoned|GivenUp|WithoutConnection|WaitsForAServer|Watch|ThreeLevels|RootCreatedLate|DepthDataAndSelector|WriteStorm
OLD_RECIPES := ./recipes/cache ./recipes/discovery ./recipes/group ./recipes/partition ./recipes/shared
# The integration tests that differ on 3.8: Curator 5.4 beside us (the interop tests),
# ACLs and TLS, whose server side changed. The rest (a lost quorum, a partitioned or
# paused holder, contexts, closed clients) is the client's logic, or, for the faults,
# what the 3.8 chaos run draws.
OLD_INTEGRATION_TESTS := Curator|GoAndJava|Mixed|ACL|TLS|ContainerParents
# The framework's calls whose server side changed between 3.8 and 3.9 or that users
# run against either: ACLs, DeleteAll, create-or-set, namespaced views, members that
# move, the ensemble's configuration followed and reconfigured, TLS, persistent
# watches and the connection layer that speaks them.
OLD_FRAMEWORK_TESTS := ACL|DeleteAll|CreateOrSet|Namespaced|Moved|RollingRestart|EnsembleTracking|Reconfig|TLS|Watch|ReplyLargerThan|HugeConnectResponse
# staticcheck at a pinned version, from the Go module proxy, over every module.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(GO) run $(STATICCHECK) ./...
	cd bench && $(GO) run $(STATICCHECK) ./...
	cd examples/metrics && $(GO) run $(STATICCHECK) ./...
	cd cmd/zkr/uitest && $(GO) run $(STATICCHECK) ./...

# Parts of make test that run side by side, as the test binaries do; each part's
# output is printed whole when it ends. The side-by-side modules' tests run beside
# the module's own (test-race), three parts at a time: the bench smoke tests mostly
# wait on their peers, and once the library's tests were over, the cores were idle a
# third of that time. On 3.8 the integration tests, the followers' and the
# framework's run at once: each waits on its servers much of its time. Beside the
# library's tests, on a machine 1.6 times slower than the one CI took 12 minutes on,
# the bench module's took more than 5 minutes (81 s alone): their guard is 10.
SIDE_BY_SIDE := -j3 --output-sync=target
.PHONY: test-race test-bench test-metrics test-uitest test-old-integration test-old-followers test-old-framework
test-race:
	$(GO) test -race -count=1 -p $(TEST_P) -timeout 12m -skip '^TestChaos$$' $(LONGEST_FIRST) ./...
test-bench:
	cd bench && $(GO) test -race -count=1 -timeout 10m ./...
test-metrics:
	cd examples/metrics && $(GO) test -race -count=1 -timeout 5m ./...
test-uitest:
	cd cmd/zkr/uitest && $(GO) test -race -count=1 -timeout 5m ./...
test-old-integration:
	$(GO) test -race -count=1 -p $(TEST_P) -timeout 12m -run '$(OLD_INTEGRATION_TESTS)' ./integration
test-old-followers:
	$(GO) test -race -count=1 -p $(TEST_P) -timeout 12m -run '$(OLD_RECIPE_TESTS)' $(OLD_RECIPES)
test-old-framework:
	$(GO) test -race -count=1 -timeout 12m -run '$(OLD_FRAMEWORK_TESTS)' ./framework

# Four test binaries at a time, not one per core: the tests mostly wait (for servers
# to start, sessions to expire, a fault to pass), and with two at a time on two cores
# the CPUs were idle half of the CI run (16m46s, 13m15s user and 3m03s system).
TEST_P := 4
# The packages whose tests take longest (a minute or more on two busy cores), named
# before ./..., which adds the others once each: go test starts the test binaries in
# the order of its packages, and a long one started last (zktest's, in ./...'s order)
# ran on alone after the others had ended.
LONGEST_FIRST := ./integration ./framework ./cmd/zkr ./recipes/cache ./zktest ./recipes/nodes
test: deps curator-peer fmt-check vet staticcheck oldest-go
	$(NEW) $(GO) test -count=1 -v -run '^TestVersions$$' ./integration
	$(NEW) $(MAKE) --no-print-directory $(SIDE_BY_SIDE) test-race test-bench test-metrics test-uitest
	promtool test rules deploy/prometheus/zkrecipes-rules.test.yml
	$(NEW) $(MAKE) --no-print-directory chaos DURATION=30s CHAOS_TIMEOUT=5m
	$(OLD) $(GO) test -count=1 -v -run '^TestVersions$$' ./integration
	$(OLD) $(MAKE) --no-print-directory $(SIDE_BY_SIDE) test-old-integration test-old-followers test-old-framework
	$(OLD) $(MAKE) --no-print-directory chaos DURATION=30s CHAOS_TIMEOUT=5m
	$(MAKE) --no-print-directory fuzz FUZZTIME=50000x

# The oldest Go the module supports is the one go.mod's go line declares; this keeps
# the claim true. That toolchain (GOTOOLCHAIN fetches it through the module proxy
# once) vets every package with its tests, which type-checks all of them against its
# standard library, and runs the tests that need no ZooKeeper: the lock queue's
# order and rules, HoldContext, the partition's assignment, the counter's version
# proof, listener delivery, the cost of telemetry left off, paths, protected names,
# retry schedules, the fault proxy, the chaos checker's own test, the connection layer
# (framework/internal/wire, whose tests need no ZooKeeper), and every fuzz
# target's seeds (the names also catch a few framework tests, of namespaces, protected
# creates and retries, that start a server of their own: they run too). The tests
# against ZooKeeper run once, with the race detector, on the current Go. Keep the go
# line a release's full name (1.25.0, not 1.25): it names the toolchain here.
GO_OLDEST := $(shell sed -n 's/^go //p' go.mod)
NO_ZOOKEEPER_TESTS := ^(Test(Sequence|SortChildren.*|Rules|HoldContext|Context|Check|CheckName|DefaultID|CleanupContext.*|Pauses.*|Transitions|UnmeasuredAllocatesNothing|Assign.*|TookVersion|Validate.*|Namespace.*|ParentPath.*|Protected.*|Retry.*|IsRetryable|Proxy(Forwards|CutAndRestore|Drop|Blackhole|SetTarget|Close|ExpireSession|ConcurrentFaults)|NewProxyCleanup|StartProxyRejectsBadTarget|ChaosChecksCatchViolations|LivenessAndSoakChecksCatchViolations|DeliveryInOrderAfterABlockedListener|StopDropsWhatIsPending|ListenHearsWhatIsPushedAfter|StartAndStop|StopFromAListener|StopBeforeStart|QueueHandsOutEachItemOnce|Outcome)|Fuzz.*)$$
oldest-go:
	GOTOOLCHAIN=go$(GO_OLDEST) $(GO) vet ./...
	GOTOOLCHAIN=go$(GO_OLDEST) $(GO) test -count=1 -run '$(NO_ZOOKEEPER_TESTS)' \
		./recipes/internal/lockqueue ./recipes/internal/nodewrite ./internal/notify ./recipes/internal/instrument \
		./recipes/internal/hold ./recipes/internal/args ./recipes/internal/attempt ./recipes/internal/lifecycle \
		./recipes/partition ./framework ./zktest ./integration
	GOTOOLCHAIN=go$(GO_OLDEST) $(GO) test -count=1 ./framework/internal/wire/...

# Every recipe at work on a three-server ensemble under faults (connections cut,
# sessions expired, servers and the leader killed, a server or the leader cut off from
# the others, the quorum lost, a holder process paused past its session), checked for
# what the recipes promise, and for liveness once the faults stop; prints a report and
# fails on any violation. make chaos DURATION=10m.
#
# Without the race detector, unlike every other test, for the load it puts on the
# servers. go-zookeeper v1.0.4 races on Conn.lastZxid between its receive loop and
# its re-sending of watches after a reconnect (go-zookeeper/zk#35, open since 2020);
# in race builds the client holds replies back exactly until go-zookeeper has re-sent
# its watches (framework/internal/wire/replyhold.go). GOFLAGS=-race make chaos runs it with the race
# detector.
#
# A run that finds a violation or a server data loss keeps the servers' data
# directories (snapshots, transaction logs, server.log), its fault log and the writes
# the servers acknowledged (with their zxids) in a directory of its own under $(KEEPDIR),
# named by its start and seed; KEEP=all keeps them after a clean run too.
# scripts/txnlog.sh reads the newest (or the one named) with ZooKeeper's own tools.
# SEED=n replays a report's fault schedule (its choices; the timing is the machine's).
DURATION ?= 2m
CHAOS_TIMEOUT ?= 2h
CHAOS_FLAGS ?=
KEEP ?=
SEED ?=
KEEPDIR ?= $(CURDIR)/build/chaos-keep
chaos: deps
	$(GO) test -count=1 -v -timeout $(CHAOS_TIMEOUT) -run '^TestChaos$$' ./integration -chaos.duration=$(DURATION) \
		-chaos.keep=$(KEEPDIR) $(if $(filter all,$(KEEP)),-chaos.keepall) $(if $(SEED),-chaos.seed=$(SEED)) $(CHAOS_FLAGS)

# The chaos run as a soak: faults throughout, and every 10 s a sample of the clients'
# goroutines and live heap (the heap the test's own record of the run holds is shown
# apart, not judged) and the servers' watches (wchs) and nodes. Fails on a curve
# that grows from the run's first third to its second and again to its last; prints
# each curve as a sparkline and draws them in build/soak.svg. make soak DURATION=1h.
# On ZooKeeper 3.9.6 by default (the newest that make deps brings); ZKTEST_ZOOKEEPER=3.8
# make soak for 3.8.0 (see docs/servers.md for what it loses: the report lists its lost
# writes apart, and on 3.8.0 and 3.9.3 only they do not fail the run; the recipes'
# failures do).
soak: deps
	@mkdir -p build
	$(MAKE) --no-print-directory chaos DURATION=$(DURATION) CHAOS_FLAGS="-chaos.sample=10s -chaos.plot=$(CURDIR)/build/soak.svg"

# The fuzz targets: paths and namespaces, Curator's protected names, the sequence at
# the end of a node's name, and a lock path's listing (foreign nodes, kazoo's and
# Curator's names, malformed sequences, the counter's wrap) sorted and decided on by
# every recipe's rule, each against a model written in its test; and what a hostile
# server's SASL sends (the sasl reply, DIGEST-MD5's challenge, GSS-API's context and
# wrap tokens, and both through the GSSAPI client into gokrb5's decoders). Seeds in each
# package's testdata/fuzz. make fuzz FUZZTIME=5m for a longer run (FUZZTIME=1000000x
# for one that a busy machine cannot fail at its end).
FUZZTIME ?= 30s
FUZZ_TARGETS := framework:FuzzValidatePath framework:FuzzProtectedName \
	recipes/internal/lockqueue:FuzzSequence recipes/internal/lockqueue:FuzzSortChildren \
	recipes/internal/lockqueue:FuzzDecide \
	framework/internal/sasl:FuzzDecodeResponse framework/internal/sasl:FuzzParseChallenge \
	framework/internal/sasl:FuzzParseWrapToken framework/internal/sasl:FuzzParseContextToken \
	framework/internal/sasl:FuzzGSSAPISteps \
	framework/internal/wire:FuzzConnectResponse framework/internal/wire:FuzzHeader \
	framework/internal/wire:FuzzNotification framework/internal/wire:FuzzSetWatches2 \
	framework/internal/wire:FuzzRequest framework/internal/wire:FuzzStream framework/internal/wire:FuzzReplies
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
		out=$$($(GO) test -run '^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) ./$$pkg 2>&1) || { echo "$$out"; exit 1; }; \
	done

# The main job, on a throwaway local ZooKeeper (or ZK_SERVERS): three scheduler
# replicas elect one poller, the poller's session is expired and another takes
# over; they share twelve jobs through the partitioner, one is killed and its jobs
# move while the others' run on, a new one takes its share; then five workers count
# under a lock.
demo:
	@scripts/deps.sh zookeeper
	$(GO) run ./examples/scheduler

# Benchmarks: zkrecipes against the raw ZooKeeper operations its recipes need,
# go-zookeeper's zk.Lock and Apache Curator (the peer), on one throwaway server (or the
# first of ZK_SERVERS, which must be on loopback), in alternation. Prints the table and
# writes it to docs/benchmarks/BENCHMARKS.md, with the machine's description and
# bench/benchmarks.png. The reports live in docs/benchmarks/ (docs/benchmarks.md is
# the guide to them).
# About six minutes on two cores; `make bench BENCH_ARGS=-h` for smaller runs. The
# driver is built into build/bench and run from here, so its paths are the repo's.
# Then the same on a three-server ensemble (zkrecipes against Curator: uncontended,
# 8 sessions contending, queued waiters, hand-over), with requests and watches per
# member, into docs/benchmarks/BENCHMARKS-ensemble.md. Last, the cache, group,
# counter and partition scenarios (issues 13 to 15, -recipes) against Curator's
# recipes and, for the partition, kazoo's SetPartitioner (bench/kazoo-peer), into
# docs/benchmarks/BENCHMARKS-recipes.md. Then the instrumentation's cost, off against
# metrics against metrics and traces (scripts/bench-telemetry.sh, benchstat), into
# docs/benchmarks/BENCHMARKS-telemetry.md. On ZooKeeper 3.9.6 with Curator 5.7.1 by
# default, each report naming both as the server and the peer report them; ZKTEST_ZOOKEEPER=3.8 ZKTEST_CURATOR=5.4 make bench for 3.8 and 5.4.
# First of all, the lock scenarios in round trips (issue 45, -delay): zkrecipes, zk.Lock
# and Curator through bench's own proxy, which delays every byte 5 ms each way, the unit
# being one request through it, into docs/benchmarks/BENCHMARKS-latency.md; BENCHMARKS.md
# repeats its table and targets (-latency).
BENCH_DIR := docs/benchmarks
BENCH_ARGS ?= -out $(BENCH_DIR)/BENCHMARKS.md -plot bench/benchmarks.png -latency build/bench-latency.json
BENCH_ENSEMBLE_ARGS ?= -ensemble 3 -out $(BENCH_DIR)/BENCHMARKS-ensemble.md -plot '' -analysis '' -save build/bench-ensemble.json
BENCH_RECIPES_ARGS ?= -recipes -out $(BENCH_DIR)/BENCHMARKS-recipes.md -plot '' -analysis '' -save build/bench-recipes.json
BENCH_LATENCY_ARGS ?= -delay 5ms -out $(BENCH_DIR)/BENCHMARKS-latency.md -plot '' -analysis '' -save build/bench-latency.json
.PHONY: bench build/bench
bench: deps curator-peer build/bench
	@scripts/deps.sh kazoo
	build/bench $(BENCH_LATENCY_ARGS)
	build/bench $(BENCH_ARGS)
	build/bench $(BENCH_ENSEMBLE_ARGS)
	build/bench $(BENCH_RECIPES_ARGS)
	GO=$(GO) scripts/bench-telemetry.sh $(BENCH_DIR)/BENCHMARKS-telemetry.md

build/bench:
	cd bench && $(GO) build -o ../build/bench .

# How each recipe's cost grows (issue 28): the lock queue from 10 to 5,000 waiters,
# the cache from 1,000 to 100,000 nodes, the partitioner from 24 items × 4 members to
# 2,000 × 50 (its assignment, partition.Assign, in process up to 5,000 × 2,000), the
# group from 10 to 1,000 members (each following the group), discovery from 10
# to 3,000 instances of one service, the election from 10 to 1,000 candidates, each
# figure per unit of size, zkrecipes beside Curator (and kazoo for the partitioner),
# and for the followers of state (cache, group, discovery) beside zkrecipes-oneshot,
# the same recipes on one-shot watches (framework.WithOneShotWatches, issue 36), with
# issue 36's goals checked, into docs/benchmarks/BENCHMARKS-scale.md and its log-log
# plots beside it (BENCHMARKS-scale-<recipe>.svg). Counts do not depend on the
# machine's load, times do. `make bench-scale BENCH_SCALE_ARGS='-curves -curves-recipes
# partition'` for one recipe, `-curves-oneshot-max group=300` to cap the one-shot
# contender's sizes; a smoke run at the smallest sizes is in bench's tests (make test).
# On two cores shared with other heavy work the one-shot group of 1,000 took 10
# minutes and Curator's did not finish in 33 (206 s on a quiet machine); the peer runs
# with a 4 GiB heap.
BENCH_SCALE_ARGS ?= -curves -out $(BENCH_DIR)/BENCHMARKS-scale.md
bench-scale: deps curator-peer build/bench
	@scripts/deps.sh kazoo
	build/bench $(BENCH_SCALE_ARGS)
