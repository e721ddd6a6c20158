package driver

import (
	"fmt"
	"math"
	"time"
)

// The contenders, in the order they run and are shown.
const (
	limitName   = "limit"
	zkLockName  = "zk.Lock"
	recipesName = "zkrecipes"
	curatorName = "Curator"
	// oneShotName is zkrecipes on one-shot watches only (framework.WithOneShotWatches),
	// a contender of the scale curves of the followers of state (issue 36).
	oneShotName = "zkrecipes-oneshot"
)

var AllContenders = []string{limitName, zkLockName, recipesName, curatorName}

// Settings sizes the scenarios.
type Settings struct {
	Runs     int           // runs per contender and scenario, alternating
	Cycles   int           // timed uncontended cycles per run
	Warmup   int           // untimed cycles before them
	Duration time.Duration // of each contended run
	Rounds   int           // leader hand-overs per run
	Settle   time.Duration // for a new follower to queue up before the next hand-over
	Waiters  int           // waiters queued to count their watches
	Scale    int           // waiters of the scale scenario
	// WarmupTime is how long, at least, the contenders take turns at an untimed
	// warm-up before the first scenario.
	WarmupTime time.Duration
	// Members is the size of the ensemble the driver starts; 0 or 1 for one server.
	Members int
	// Delay, if not 0, is what the contenders' proxy adds each way (the latency
	// mode), and RoundTrip one request through it, as the driver timed it: figures
	// in round trips are divided by it.
	Delay, RoundTrip time.Duration
}

// scenario is one workload, run by each of its contenders settings.runs times.
type scenario struct {
	id      string
	title   string
	work    workload // without its path, which each trial gets anew
	who     []string // the contenders it applies to
	metrics []metric
	// optional scenarios run only when -only names them.
	optional bool
}

// metric turns a trial's measurement into one figure of the table.
type metric struct {
	id     string // for the targets
	label  string
	higher bool // whether more is better
	// descriptive figures get no ratio: an ensemble member's share depends on which
	// members the sessions happened to pick, not on the contender.
	descriptive bool
	format      func(float64) string
	value       func(m measurement) float64
}

// measurement is everything the driver saw of one trial.
type measurement struct {
	Res     result
	Packets int64 // requests the servers received during Run, less the driver's
	Watches int   // watches the servers held once the waiters queued (wchs)
	Bytes   int64 // response bytes the servers sent during Run (mntr's zk_response_bytes)
	// QueueBytes are those of Bytes sent until every waiter of a queue waited.
	QueueBytes int64
	// The same two per member of an ensemble, in the order of its addresses.
	PacketsByMember []int64
	WatchesByMember []int
	LockWatches     int           // those of them on the lock's nodes (wchp)
	LockTakes       int           // a counter's promotions to its lock
	QueueTime       time.Duration // from the waiters' start until every one of them watched
	Goroutines      float64       // of this process, per queued waiter
	Heap            float64       // bytes of this process's heap, per queued waiter
	ClientCPU       time.Duration // the contender's process's CPU time during Run
	ServerCPU       time.Duration // the server's, or -1 when it is not our child
	OtherLoad       float64       // share of the machine's CPU time other processes used during Run, 0 to 1
}

func scenarios(s Settings) []scenario {
	var list []scenario
	list = append(list, scenario{
		id:    "uncontended",
		title: fmt.Sprintf("Uncontended mutex: one session, %d Acquire+Release cycles (after %d untimed)", s.Cycles, s.Warmup),
		work:  workload{Kind: cycles, Cycles: s.Cycles, Warmup: s.Warmup},
		who:   AllContenders,
		metrics: []metric{
			latencyMetric("uncontended-p50", "uncontended cycle, p50 (µs)", 50, micros, fmtInt),
			latencyMetric("uncontended-p99", "uncontended cycle, p99 (µs)", 99, micros, fmtInt),
			rateMetric("uncontended-rate", "uncontended cycles/s", func(r result) int { return r.Ops }),
			requestsMetric("uncontended-requests", "requests per uncontended cycle"),
			cpuMetric("uncontended-client-cpu", "client CPU per uncontended cycle (µs)", false),
			cpuMetric("uncontended-server-cpu", "server CPU per uncontended cycle (µs)", true),
		},
	})
	for _, n := range []int{2, 8, 32} {
		list = append(list, scenario{
			id:    fmt.Sprintf("mutex-%d", n),
			title: fmt.Sprintf("Contended mutex: %d sessions on one path for %v", n, s.Duration),
			work:  workload{Kind: contended, Sessions: n, Duration: s.Duration},
			who:   AllContenders,
			metrics: []metric{
				rateMetric(fmt.Sprintf("mutex-%d-rate", n), fmt.Sprintf("contended mutex, %d sessions (acq/s)", n), func(r result) int { return r.Ops }),
				requestsMetric(fmt.Sprintf("mutex-%d-requests", n), fmt.Sprintf("requests per acquisition, %d sessions", n)),
				cpuMetric(fmt.Sprintf("mutex-%d-client-cpu", n), fmt.Sprintf("client CPU per acquisition, %d sessions (µs)", n), false),
				cpuMetric(fmt.Sprintf("mutex-%d-server-cpu", n), fmt.Sprintf("server CPU per acquisition, %d sessions (µs)", n), true),
			},
		})
	}
	list = append(list, scenario{
		id:    "waiters",
		title: fmt.Sprintf("%d waiters (one session each) queued behind a holder, then each acquires once", s.Waiters),
		work:  workload{Kind: queue, Waiters: s.Waiters, Sessions: s.Waiters},
		who:   AllContenders,
		metrics: []metric{
			{id: "waiters-watches", label: fmt.Sprintf("lock watches per waiter, %d queued", s.Waiters), format: fmtFloat2,
				value: func(m measurement) float64 { return float64(m.LockWatches) / float64(m.Res.Ops-1) }},
			{id: "waiters-all-watches", label: fmt.Sprintf("all watches per waiter, %d queued", s.Waiters), format: fmtFloat2,
				value: func(m measurement) float64 { return float64(m.Watches) / float64(m.Res.Ops-1) }},
			requestsMetric("waiters-requests", fmt.Sprintf("requests per acquisition, %d queued", s.Waiters)),
		},
	})
	list = append(list, scenario{
		id:    "rwlock-readers",
		title: fmt.Sprintf("Read/write lock: 8 reader sessions for %v", s.Duration),
		work:  workload{Kind: rw, Readers: 8, Duration: s.Duration},
		who:   []string{limitName, recipesName, curatorName},
		metrics: []metric{
			rateMetric("rw8-read-rate", "rwlock, 8 readers: reads/s", func(r result) int { return r.Reads }),
			requestsMetric("rw8-requests", "requests per read, 8 readers"),
		},
	}, scenario{
		id:    "rwlock-writer",
		title: fmt.Sprintf("Read/write lock: 8 reader sessions and 1 writer session for %v", s.Duration),
		work:  workload{Kind: rw, Readers: 8, Writers: 1, Duration: s.Duration},
		who:   []string{limitName, recipesName, curatorName},
		metrics: []metric{
			rateMetric("rw8w1-read-rate", "rwlock, 8 readers + 1 writer: reads/s", func(r result) int { return r.Reads }),
			rateMetric("rw8w1-write-rate", "rwlock, 8 readers + 1 writer: writes/s", func(r result) int { return r.Writes }),
			requestsMetric("rw8w1-requests", "requests per acquisition, 8 readers + 1 writer"),
		},
	})
	list = append(list, scenario{
		id:    "semaphore",
		title: fmt.Sprintf("Semaphore: 16 sessions on 3 leases, one lease each at a time, for %v", s.Duration),
		work:  workload{Kind: counting, Sessions: 16, Leases: 3, Duration: s.Duration},
		who:   []string{limitName, recipesName, curatorName},
		metrics: []metric{
			rateMetric("semaphore-rate", "semaphore, 16 sessions on 3 leases (acq/s)", func(r result) int { return r.Ops }),
			requestsMetric("semaphore-requests", "requests per lease, 16 sessions on 3 leases"),
		},
	})
	list = append(list, scenario{
		id: "handover",
		title: fmt.Sprintf("Leader hand-over: the leader leaves, until the next one's listener fires; %d rounds, "+
			"%v for the new follower to queue up between rounds", s.Rounds, s.Settle),
		work: workload{Kind: handover, Rounds: s.Rounds, Settle: s.Settle},
		who:  AllContenders,
		metrics: []metric{
			latencyMetric("handover-p50", "leader hand-over, p50 (ms)", 50, millis, fmtFloat2),
			latencyMetric("handover-p99", "leader hand-over, p99 (ms)", 99, millis, fmtFloat2),
		},
	})
	list = append(list, scenario{
		id:    "scale",
		title: fmt.Sprintf("Scale: %d waiters on one session queued behind a holder, then each acquires once", s.Scale),
		work:  workload{Kind: queue, Waiters: s.Scale, Sessions: 1},
		who:   []string{limitName, zkLockName, recipesName},
		metrics: []metric{
			{id: "scale-queue", label: fmt.Sprintf("scale: queue %d waiters (s)", s.Scale), format: fmtFloat2,
				value: func(m measurement) float64 { return m.QueueTime.Seconds() }},
			{id: "scale-drain", label: fmt.Sprintf("scale: drain %d waiters (s)", s.Scale), format: fmtFloat2,
				value: func(m measurement) float64 { return m.Res.Elapsed.Seconds() }},
			requestsMetric("scale-requests", "scale: requests per acquisition"),
			{id: "scale-watches", label: "scale: lock watches per waiter", format: fmtFloat2,
				value: func(m measurement) float64 { return float64(m.LockWatches) / float64(m.Res.Ops-1) }},
			{id: "scale-goroutines", label: "scale: goroutines per waiter", format: fmtFloat2,
				value: func(m measurement) float64 { return m.Goroutines }},
			{id: "scale-heap", label: "scale: heap per waiter (KiB)", format: fmtFloat1,
				value: func(m measurement) float64 { return m.Heap / 1024 }},
		},
	})
	list = append(list, recipeScenarios(s)...)
	list = append(list, discoveryScenarios(s)...)
	list = append(list, counterScenarios(s)...)
	list = append(list, partitionScenarios(s)...)
	if s.RoundTrip > 0 {
		addRoundTrips(list, s.RoundTrip)
	}
	if s.Members > 1 {
		for i := range list {
			list[i].metrics = append(list[i].metrics, memberMetrics(list[i], s.Members)...)
		}
	}
	return list
}

// addRoundTrips adds, in the latency mode, each lock scenario's time in round trips:
// an uncontended cycle's and a hand-over's median, a contended acquisition's
// (the run's time over its acquisitions, so with n sessions, what one more
// acquisition costs the whole), a write's among readers and a lease's.
func addRoundTrips(list []scenario, rt time.Duration) {
	inRTs := func(d time.Duration) float64 { return float64(d) / float64(rt) }
	per := func(id, label string, count func(result) int) metric {
		return metric{id: id, label: label, format: fmtFloat2, value: func(m measurement) float64 {
			if n := count(m.Res); n > 0 {
				return inRTs(m.Res.Elapsed) / float64(n)
			}
			return math.NaN()
		}}
	}
	ops := func(r result) int { return r.Ops }
	for i, sc := range list {
		var m metric
		switch sc.id {
		case "uncontended":
			m = latencyMetric("uncontended-rt", "uncontended cycle, p50 (round trips)", 50, inRTs, fmtFloat2)
		case "mutex-2", "mutex-8", "mutex-32":
			m = per(sc.id+"-rt", fmt.Sprintf("time per acquisition, %s sessions (round trips)", sc.id[len("mutex-"):]), ops)
		case "rwlock-writer":
			m = per("rw8w1-write-rt", "time per write, 8 readers + 1 writer (round trips)", func(r result) int { return r.Writes })
		case "semaphore":
			m = per("semaphore-rt", "time per lease, 16 sessions on 3 leases (round trips)", ops)
		case "handover":
			m = latencyMetric("handover-rt", "leader hand-over, p50 (round trips)", 50, inRTs, fmtFloat2)
		default:
			continue
		}
		list[i].metrics = append([]metric{m}, sc.metrics...)
	}
}

func latencyMetric(id, label string, p float64, unit func(time.Duration) float64, format func(float64) string) metric {
	return metric{id: id, label: label, format: format, value: func(m measurement) float64 {
		return unit(Percentile(m.Res.Latencies, p))
	}}
}

func rateMetric(id, label string, count func(result) int) metric {
	return metric{id: id, label: label, higher: true, format: fmtInt, value: func(m measurement) float64 {
		if m.Res.Elapsed <= 0 {
			return math.NaN()
		}
		return float64(count(m.Res)) / m.Res.Elapsed.Seconds()
	}}
}

func requestsMetric(id, label string) metric {
	return metric{id: id, label: label, format: fmtFloat2, value: func(m measurement) float64 {
		if m.Res.Total == 0 {
			return math.NaN()
		}
		return float64(m.Packets) / float64(m.Res.Total)
	}}
}

// cpuMetric is the CPU time of the contender's process (or the server's) per
// acquisition made during the measured part.
func cpuMetric(id, label string, server bool) metric {
	return metric{id: id, label: label, format: fmtInt, value: func(m measurement) float64 {
		cpu := m.ClientCPU
		if server {
			cpu = m.ServerCPU
		}
		if m.Res.Total == 0 || cpu < 0 {
			return math.NaN()
		}
		return micros(cpu) / float64(m.Res.Total)
	}}
}

func fmtInt(v float64) string    { return fmt.Sprintf("%.0f", v) }
func fmtFloat1(v float64) string { return fmt.Sprintf("%.1f", v) }
func fmtFloat2(v float64) string { return fmt.Sprintf("%.2f", v) }

// memberMetrics are an ensemble's requests per acquisition at each member, and for a
// queue, the watches each member holds once every waiter waits.
func memberMetrics(sc scenario, members int) []metric {
	var ms []metric
	for i := range members {
		ms = append(ms, metric{id: fmt.Sprintf("%s-requests-m%d", sc.id, i+1),
			label: fmt.Sprintf("%s: requests per acquisition at member %d", sc.id, i+1), format: fmtFloat2, descriptive: true,
			value: func(m measurement) float64 {
				if m.Res.Total == 0 || i >= len(m.PacketsByMember) {
					return math.NaN()
				}
				return float64(m.PacketsByMember[i]) / float64(m.Res.Total)
			}})
	}
	if sc.work.Kind != queue {
		return ms
	}
	for i := range members {
		ms = append(ms, metric{id: fmt.Sprintf("%s-watches-m%d", sc.id, i+1),
			label: fmt.Sprintf("%s: watches at member %d", sc.id, i+1), format: fmtInt, descriptive: true,
			value: func(m measurement) float64 {
				if i >= len(m.WatchesByMember) {
					return math.NaN()
				}
				return float64(m.WatchesByMember[i])
			}})
	}
	return ms
}
