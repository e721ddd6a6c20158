package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// row is one figure of the table: a metric of a scenario, per contender.
type row struct {
	scenario string
	metric   metric
	median   map[string]float64
	runs     map[string][]float64
}

// Report is what one run of the benchmark found; it is saved as JSON and can be
// rendered again from it.
type Report struct {
	Settings   Settings
	Args       []string // the driver's command line
	Contenders []string
	Scenarios  []string // ids of the scenarios that ran, in order
	Results    map[string]map[string][]measurement
	Machine    [][2]string
	Failures   []string
	Elapsed    time.Duration
	Date       time.Time

	scenarios []scenario
	rows      []row
}

func (b *bench) report(ctx context.Context, s Settings, ran []scenario, elapsed time.Duration) *Report {
	r := &Report{Settings: s, Args: os.Args[1:], Results: b.results, Failures: b.failures,
		Elapsed: elapsed, Date: time.Now().UTC()}
	for _, c := range b.contenders {
		r.Contenders = append(r.Contenders, c.Name())
	}
	for _, s := range ran {
		r.Scenarios = append(r.Scenarios, s.id)
	}
	r.Machine = machine(ctx, b.tg, b.contenders)
	if slices.Contains(r.Contenders, kazooName) {
		r.Machine = append(r.Machine, [2]string{"kazoo", kazooVersion(ctx) + " (Debian's python3-kazoo, on " + kazooPython + ")"})
	}
	r.tabulate()
	return r
}

// tabulate makes the rows: each metric's figures per contender and run, and medians.
func (r *Report) tabulate() {
	r.scenarios, r.rows = nil, nil
	for _, s := range scenarios(r.Settings) {
		if !slices.Contains(r.Scenarios, s.id) {
			continue
		}
		r.scenarios = append(r.scenarios, s)
		for _, m := range s.metrics {
			rw := row{scenario: s.id, metric: m, median: map[string]float64{}, runs: map[string][]float64{}}
			for _, c := range r.Contenders {
				ms, ok := r.Results[s.id][c]
				if !ok || len(ms) == 0 {
					continue
				}
				for _, x := range ms {
					rw.runs[c] = append(rw.runs[c], m.value(x))
				}
				rw.median[c] = median(rw.runs[c])
			}
			r.rows = append(r.rows, rw)
		}
	}
}

// save writes the report's raw results as JSON, for -from.
func (r *Report) Save(file string) error {
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// LoadReport reads what save wrote.
func LoadReport(file string) (*Report, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	r.tabulate()
	return r, nil
}

// value is a row's median for contender c, NaN when it has none.
func (rw row) value(c string) float64 {
	v, ok := rw.median[c]
	if !ok {
		return math.NaN()
	}
	return v
}

// ratios are of's figure over to's, run by run: run i of every contender ran in the
// same round of alternation, so a pair shares whatever the machine was doing then,
// and a ratio of medians would not.
func (rw row) ratios(of, to string) []float64 {
	a, b := rw.runs[of], rw.runs[to]
	var rs []float64
	for i := range min(len(a), len(b)) {
		if r := a[i] / b[i]; !math.IsNaN(r) && !math.IsInf(r, 0) {
			rs = append(rs, r)
		}
	}
	return rs
}

// ratio is the median of the pairwise ratios, NaN when no pair has both figures.
func (rw row) ratio(of, to string) float64 { return median(rw.ratios(of, to)) }

// spread is half the range of the pairwise ratios, relative to their median: the ±
// a ratio is printed with.
func (rw row) spread(of, to string) float64 {
	rs := rw.ratios(of, to)
	if len(rs) < 2 {
		return math.NaN()
	}
	return (slices.Max(rs) - slices.Min(rs)) / 2 / median(rs)
}

// ratioCell prints a ratio with its spread: "1.31 ±4%".
func (rw row) ratioCell(of, to string) string {
	v := rw.ratio(of, to)
	if rw.metric.descriptive || math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if sp := rw.spread(of, to); !math.IsNaN(sp) {
		return fmt.Sprintf("%.2f ±%.0f%%", v, 100*sp)
	}
	return fmt.Sprintf("%.2f", v)
}

// busy is the share of the machine other processes used during measured parts: the
// median and the largest over every trial.
func (r *Report) busy() (med, most float64, ok bool) {
	var loads []float64
	for _, byContender := range r.Results {
		for _, ms := range byContender {
			for _, m := range ms {
				loads = append(loads, m.OtherLoad)
			}
		}
	}
	if len(loads) == 0 {
		return 0, 0, false
	}
	return median(loads), slices.Max(loads), true
}

// busyLimit is the share of the machine other processes may use before the report
// says its figures are suspect: on two cores a tenth is a fifth of a core.
const busyLimit = 0.10

// BusyWarning is a sentence for a run on a busy machine, or "".
func (r *Report) BusyWarning() string {
	med, most, ok := r.busy()
	if !ok || med <= busyLimit {
		return ""
	}
	return fmt.Sprintf("WARNING: the machine was busy: other processes used a median %.0f%% (at most %.0f%%) of its CPU time "+
		"during the measured parts, above the %.0f%% a trustworthy run allows; the ratios' spreads show how much it moved them.",
		100*med, 100*most, 100*busyLimit)
}

func (r *Report) row(metricID string) (row, bool) {
	for _, rw := range r.rows {
		if rw.metric.id == metricID {
			return rw, true
		}
	}
	return row{}, false
}

var ratioColumns = [][2]string{{recipesName, curatorName}, {recipesName, zkLockName}, {recipesName, limitName}, {recipesName, kazooName}}

// columns are the contenders with a figure in the table, in the order they are
// shown: AllContenders', then kazoo (which takes part in the partition scenarios only).
func (r *Report) columns() []string {
	var cs []string
	for _, c := range append(slices.Clone(AllContenders), kazooName) {
		for _, rw := range r.rows {
			if len(rw.runs[c]) > 0 {
				cs = append(cs, c)
				break
			}
		}
	}
	return cs
}

// table renders the rows as a Markdown table, padded to read as well in a terminal.
func (r *Report) Table() string {
	columns := r.columns()
	var ratios [][2]string
	for _, rc := range ratioColumns {
		if slices.Contains(columns, rc[0]) && slices.Contains(columns, rc[1]) {
			ratios = append(ratios, rc)
		}
	}
	head := []string{"figure"}
	head = append(head, columns...)
	for _, rc := range ratios {
		head = append(head, rc[0]+"/"+rc[1])
	}
	cells := [][]string{head}
	for _, rw := range r.rows {
		line := []string{rw.metric.label}
		for _, c := range columns {
			line = append(line, cell(rw.value(c), rw.metric.format))
		}
		for _, rc := range ratios {
			line = append(line, rw.ratioCell(rc[0], rc[1]))
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(head))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var sb strings.Builder
	for n, line := range cells {
		sb.WriteString("|")
		for i, c := range line {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				sb.WriteString(" " + c + pad + " |")
			} else {
				sb.WriteString(" " + pad + c + " |")
			}
		}
		sb.WriteString("\n")
		if n == 0 {
			sb.WriteString("|")
			for i, w := range widths {
				if i == 0 {
					sb.WriteString(" " + strings.Repeat("-", w) + " |")
				} else {
					sb.WriteString(" " + strings.Repeat("-", w-1) + ": |")
				}
			}
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

func cell(v float64, format func(float64) string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return format(v)
}

// goal is one of issue 7's targets, checked against the medians.
type goal struct {
	text   string
	met    bool
	known  bool // every figure it needs was measured
	ran    bool // a scenario it needs ran: else the report leaves it out
	detail string
}

func (r *Report) goals() []goal {
	var gs []goal
	check := func(text string, ids []string, ok func(rw row) (float64, bool), show func(id string, v float64) string) {
		g := goal{text: text, met: true, known: true}
		var parts []string
		for _, id := range ids {
			rw, found := r.row(id)
			if !found {
				g.known = false
				continue
			}
			g.ran = true
			v, good := ok(rw)
			if math.IsNaN(v) {
				g.known = false
				continue
			}
			g.met = g.met && good
			parts = append(parts, show(id, v))
		}
		g.detail = strings.Join(parts, ", ")
		gs = append(gs, g)
	}
	sessions := func(id string) string { return strings.Split(id, "-")[1] + " sessions" }
	if r.Settings.Delay > 0 {
		// Through the delaying proxy only issue 45's goals apply, in round trips; the
		// loopback's are about CPU, which the delay hides.
		check("uncontended acquire and release ≤ 2.4 round trips (p50)", []string{"uncontended-rt"},
			func(rw row) (float64, bool) { v := rw.value(recipesName); return v, v <= 2.4 },
			func(_ string, v float64) string { return fmt.Sprintf("%.2f", v) })
		check("2 sessions contending ≤ 0.8× Curator's time per acquisition", []string{"mutex-2-rt"},
			func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v <= 0.8 },
			func(_ string, v float64) string { return fmt.Sprintf("%.2f× Curator's", v) })
		check("8 sessions contending no slower than Curator (the issue's goal names 4)", []string{"mutex-8-rt"},
			func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v <= 1 },
			func(_ string, v float64) string { return fmt.Sprintf("%.2f× Curator's time", v) })
		check("latch hand-over ≤ 1.4 round trips (p50)", []string{"handover-rt"},
			func(rw row) (float64, bool) { v := rw.value(recipesName); return v, v <= 1.4 },
			func(_ string, v float64) string { return fmt.Sprintf("%.2f", v) })
		return gs
	}
	rates := []string{"mutex-2-rate", "mutex-8-rate", "mutex-32-rate"}
	check("contended throughput ≥ zk.Lock's", rates,
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, zkLockName); return v, v >= 1 },
		func(id string, v float64) string { return fmt.Sprintf("%.2f× at %s", v, sessions(id)) })
	check("contended throughput ≥ 1.3× Curator's", rates,
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v >= 1.3 },
		func(id string, v float64) string { return fmt.Sprintf("%.2f× at %s", v, sessions(id)) })
	check("≤ 6 requests per contended acquisition",
		[]string{"mutex-2-requests", "mutex-8-requests", "mutex-32-requests", "waiters-requests", "scale-requests"},
		func(rw row) (float64, bool) { v := rw.value(recipesName); return v, v <= 6 },
		func(id string, v float64) string {
			return fmt.Sprintf("%.2f (%s)", v, strings.TrimSuffix(id, "-requests"))
		})
	check("≤ 4 requests per uncontended cycle", []string{"uncontended-requests"},
		func(rw row) (float64, bool) { v := rw.value(recipesName); return v, v <= 4 },
		func(_ string, v float64) string { return fmt.Sprintf("%.3f", v) })
	check("uncontended throughput within 5% of the raw-operations limit", []string{"uncontended-rate"},
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, limitName); return v, v >= 0.95 },
		func(_ string, v float64) string { return fmt.Sprintf("%.3f× the limit's cycles/s", v) })
	check("latch hand-over ≤ 0.8× Curator's (p50)", []string{"handover-p50"},
		func(rw row) (float64, bool) { v := rw.ratio(recipesName, curatorName); return v, v <= 0.8 },
		func(_ string, v float64) string { return fmt.Sprintf("%.2f× Curator's p50", v) })
	recipeGoals(check)
	counterGoals(check)
	partitionGoals(check)
	return gs
}

func (r *Report) TargetsText() string {
	var sb strings.Builder
	for _, g := range r.goals() {
		if !g.ran {
			continue
		}
		verdict := "MISSED"
		switch {
		case !g.known:
			verdict = "not measured"
		case g.met:
			verdict = "met"
		}
		fmt.Fprintf(&sb, "- %s: **%s** (%s)\n", g.text, verdict, g.detail)
	}
	return sb.String()
}

// machine describes where the benchmark ran.
func machine(ctx context.Context, tg *target, cs []contender) [][2]string {
	curator, peerFlags := "not run", javaFlags(0)
	for _, c := range cs {
		if p, ok := c.(*curatorPeer); ok {
			curator, peerFlags = p.version+" (as the peer says; "+p.classes+")", p.flags
		}
	}
	cpu, cores := "unknown", ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case !ok:
			case k == "model name" && cpu == "unknown":
				cpu = v
			case k == "cpu cores" && cores == "":
				cores = v
			}
		}
	}
	cpus := fmt.Sprintf("%d logical CPUs", runtime.NumCPU())
	if cores != "" {
		cpus += fmt.Sprintf(" (%s cores per package)", cores)
	}
	mem := "unknown"
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb float64
				if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f", &kb); err == nil {
					mem = fmt.Sprintf("%.1f GiB", kb/1024/1024)
				}
			}
		}
	}
	osName := "unknown"
	if data, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				osName = strings.Trim(v, `"`)
			}
		}
	}
	if k, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		osName += ", Linux " + strings.TrimSpace(string(k))
	}
	goVersion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/go-zookeeper/zk" {
				goVersion += ", go-zookeeper " + d.Version
			}
		}
	}
	java := "unknown"
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		java = strings.TrimSpace(lines[0])
		if len(lines) > 2 {
			java += "; " + strings.TrimSpace(lines[2])
		}
	}
	return [][2]string{
		{"CPU", cpu},
		{"cores", cpus},
		{"memory", mem},
		{"OS", osName},
		{"Go", goVersion},
		{"Java", java + " (peer flags: " + strings.Join(peerFlags, " ") + ")"},
		{"Apache Curator", curator},
		{"ZooKeeper", tg.version(ctx) + ", " + tg.origin},
	}
}

// contenderText says what each contender is, for the report.
var contenderText = map[string]string{
	limitName: "the raw ZooKeeper operations each recipe needs, sent straight through go-zookeeper " +
		"(create ephemeral-sequential, list, watch the one node the rule names, delete), with no protection, " +
		"retries or session checks: the floor the recipes are measured against.",
	zkLockName:  "go-zookeeper's own `zk.NewLock`, the bare Go peer (a mutex only; for the hand-over, whoever holds it leads).",
	recipesName: "this module, one `framework.Client` per session with its defaults.",
	curatorName: "Apache Curator's own recipes in one long-lived JVM (`bench/curator-peer`, `bench` subcommand), " +
		"driven over stdin, each trial in fresh sessions.",
	kazooName: "kazoo's `SetPartitioner` (Debian's python3-kazoo) in one long-lived Python process " +
		"(`bench/kazoo-peer/kazoo_peer.py`), driven over stdin, each member in a session of its own, each trial in fresh ones; " +
		"Curator has no partitioner.",
}

// Markdown is the whole of BENCHMARKS.md, written at out, embedding the image plot
// (if not empty) and the hand-written analysis file (if it exists).
func (r *Report) Markdown(out, plot, analysis string, latency *Report) string {
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }
	where := "one ZooKeeper server"
	if r.Settings.Members > 1 {
		where = fmt.Sprintf("an ensemble of %d ZooKeeper servers (each session connected to one of them, as clients pick)", r.Settings.Members)
	}
	w("# Benchmarks\n\n")
	w("zkrecipes measured against its contenders on %s, in one run, in alternation:\n\n", where)
	for _, c := range r.columns() {
		w("- **%s**: %s\n", c, contenderText[c])
	}
	w("\n")
	w("Generated by `make bench` on %s; the run took %v.\n\n", r.Date.Format("2006-01-02 15:04 MST"), r.Elapsed.Round(time.Second))
	w("```sh\nmake bench    # build/bench %s\n```\n\n", strings.Join(r.Args, " "))
	if r.Settings.Delay > 0 {
		w("%s\n\n", r.proxyText())
	}

	w("## Machine\n\n| | |\n|---|---|\n")
	for _, kv := range r.Machine {
		w("| %s | %s |\n", kv[0], kv[1])
	}

	w("\n## Results\n\n")
	w("Medians of %d runs per contender and scenario. Ratios are zkrecipes ÷ the other: above 1 is better for rates ", r.Settings.Runs)
	w("(acq/s, reads/s, cycles/s), below 1 is better for latencies, times, requests, watches, goroutines and heap. ")
	w("A request is a packet the server received (mntr's `zk_packets_received`, read before and after each measured part), ")
	w("less the driver's own four-letter words, divided by every acquisition the part made. Every trial has fresh sessions ")
	w("of 60 s, so no ping falls in a measured part (go-zookeeper pings 20 s after connecting, the Java client after 20 s idle). ")
	w("Client CPU is the contender's process during the measured part (ours for the Go contenders; the peer JVM's, JIT and GC ")
	w("included, for Curator), server CPU the ZooKeeper process's, both per acquisition. — means the scenario does not apply.\n\n")
	w("Each ratio is the median of the run-by-run ratios (run *i* of every contender ran in the same round of alternation), ")
	w("and ± is half the range of those ratios relative to their median.\n\n")
	if warn := r.BusyWarning(); warn != "" {
		w("**%s**\n\n", warn)
	}
	w("%s\n", r.Table())
	if plot != "" {
		if rel, err := filepath.Rel(filepath.Dir(out), plot); err == nil {
			w("![Contended mutex throughput against sessions, and the leader hand-over latency distribution](%s)\n\n", filepath.ToSlash(rel))
		}
	}

	w("## Targets\n\n%s\n", r.TargetsText())
	if latency != nil {
		w("%s", latency.roundTrips())
	}
	if analysis != "" {
		if text, err := os.ReadFile(analysis); err == nil {
			w("%s\n\n", strings.TrimSpace(string(text)))
		}
	}

	w("## Scenarios\n\n")
	for i, s := range r.scenarios {
		w("%d. `%s`: %s; contenders: %s.\n", i+1, s.id, s.title, strings.Join(s.who, ", "))
	}
	w("\n")
	if slices.ContainsFunc(r.scenarios, func(s scenario) bool { return !s.optional }) {
		w("A timed run counts the acquisitions made before its deadline; then every participant finishes the cycle it is in, ")
		w("and those acquisitions count in the requests' divisor too. Participants hold for no time: acquire, then release at once. ")
		w("Watches are counted once every waiter waits: all of them by `wchs`, those on the lock's nodes by `wchp`; ")
		w("Curator's client also watches `/zookeeper/config` once per session (its EnsembleTracker), which the first ")
		w("figure counts and the second leaves out. Goroutines and heap (live, after a collection) are ")
		w("this process's, so only for the Go contenders, and divided by the waiters. ")
	}
	if slices.ContainsFunc(r.scenarios, func(s scenario) bool { return s.work.Kind == counterAdds }) {
		w("A counter's timed run counts the adds applied before its deadline; then every session finishes the add it is in, ")
		w("and every add applied counts in the requests' and CPU's divisor. ")
	}
	if slices.ContainsFunc(r.scenarios, func(s scenario) bool { return s.work.Kind == partitionJoin }) {
		w("A partition's figures are per measured change: an item is paused from the moment its member stops its work ")
		w("(or leaves, or loses its session) until another, or the same, member starts it again; the work-seconds lost are ")
		w("the sum of those pauses. The requests are the servers' count from just before the change until it has stopped moving. ")
	}
	w("Before the first scenario the contenders ")
	w("take turns at an untimed warm-up (300 cycles, then 8 contending sessions for a second) for at least %v: ", r.Settings.WarmupTime)
	w("the server keeps getting faster for tens of seconds after it starts.\n\n")

	w("## Every run\n\n| figure | contender | runs, in order |\n|---|---|---|\n")
	for _, rw := range r.rows {
		for _, c := range r.columns() {
			vs, ok := rw.runs[c]
			if !ok {
				continue
			}
			var s []string
			for _, v := range vs {
				s = append(s, cell(v, rw.metric.format))
			}
			w("| %s | %s | %s |\n", rw.metric.label, c, strings.Join(s, ", "))
		}
	}
	if len(r.Failures) > 0 {
		w("\n## Failures\n\n")
		for _, f := range r.Failures {
			w("- %s\n", f)
		}
	}
	return sb.String()
}

// contendedCurve is the median contended throughput of each contender, by sessions.
func (r *Report) ContendedCurves() map[string][][2]float64 {
	curves := map[string][][2]float64{}
	for _, n := range []int{2, 8, 32} {
		rw, ok := r.row(fmt.Sprintf("mutex-%d-rate", n))
		if !ok {
			continue
		}
		for _, c := range AllContenders {
			if v := rw.value(c); !math.IsNaN(v) {
				curves[c] = append(curves[c], [2]float64{float64(n), v})
			}
		}
	}
	return curves
}

// handovers is every hand-over latency of each contender, runs pooled.
func (r *Report) Handovers() map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for c, ms := range r.Results["handover"] {
		for _, m := range ms {
			out[c] = append(out[c], m.Res.Latencies...)
		}
		slices.Sort(out[c])
	}
	return out
}

// roundTrips is a latency run's table and targets, as a section of another report
// (the main one, which issue 45 asks to show them): its own report, with every run
// and the scenarios, is the one its -out wrote (BENCHMARKS-latency.md).
func (r *Report) roundTrips() string {
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }
	w("## In round trips\n\n")
	w("The lock scenarios again, from the latency run of %s (`build/bench %s`, %d runs per contender and scenario), ",
		r.Date.Format("2006-01-02 15:04 MST"), strings.Join(r.Args, " "), r.Settings.Runs)
	w("whose own report, with every run, is BENCHMARKS-latency.md. %s\n\n", r.proxyText())
	if warn := r.BusyWarning(); warn != "" {
		w("**%s**\n\n", warn)
	}
	w("%s\n", r.Table())
	w("%s\n", r.TargetsText())
	return sb.String()
}

// proxyText says how a latency run reached the server and what its unit is.
func (r *Report) proxyText() string {
	return fmt.Sprintf("Every contender reached the server through a proxy that delays every byte by %v each way, as a network would; "+
		"one request through it took %v (the driver's median of 50), the unit of the figures in round trips.",
		r.Settings.Delay, r.Settings.RoundTrip.Round(10*time.Microsecond))
}
