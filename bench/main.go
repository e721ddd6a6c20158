// Command bench measures zkrecipes against the raw ZooKeeper operations its recipes
// need (the limit), go-zookeeper's own zk.Lock and Apache Curator (through the Java
// peer in bench/curator-peer), on one ZooKeeper server in one run. `make bench` runs
// it: it prints one table and writes it, with the machine's description and a plot,
// to docs/benchmarks/BENCHMARKS.md. The scenarios and the way they are measured are in
// bench/internal/driver; this command reads flags and draws.
//
// Without configuration it starts a throwaway ZooKeeper; ZK_SERVERS=host:port uses
// that server instead, which must be on loopback.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/bench/internal/driver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Where the reports go by default, relative to the repository's root, from which
// `make bench` runs the driver: docs/benchmarks/, beside the guide that points to
// them (docs/benchmarks.md). The plot stays with the driver's sources; the report
// links it by its path relative to the report's own.
const (
	reportDir            = "docs/benchmarks"
	defaultOut           = reportDir + "/BENCHMARKS.md"
	defaultScaleOut      = reportDir + "/BENCHMARKS-scale.md"
	defaultPlot          = "bench/benchmarks.png"
	defaultAnalysis      = "bench/analysis.md"
	defaultScaleAnalysis = "bench/analysis-scale.md"
)

type options struct {
	driver.Config
	scale      bool
	scaleCfg   driver.ScaleConfig
	out        string
	plot       string
	analysis   string
	save       string
	from       string
	latency    *driver.Report // -latency's, read before anything runs
	cpuprofile string
}

func parseFlags() (options, error) {
	var o options
	var contenders, only string
	var recipes bool
	flag.IntVar(&o.Runs, "runs", 3, "runs per contender and scenario, alternating; medians are reported")
	flag.IntVar(&o.Cycles, "cycles", 2000, "timed uncontended cycles per run")
	flag.IntVar(&o.Warmup, "warmup", 200, "untimed uncontended cycles before them")
	flag.DurationVar(&o.Duration, "duration", 3*time.Second, "length of each contended run")
	flag.DurationVar(&o.WarmupTime, "warmup-time", 20*time.Second, "untimed load on every contender before the first scenario")
	flag.IntVar(&o.Rounds, "rounds", 50, "leader hand-overs per run")
	flag.DurationVar(&o.Settle, "settle", 50*time.Millisecond, "pause for a new follower to queue up between hand-overs")
	flag.IntVar(&o.Waiters, "waiters", 16, "waiters queued, one session each, to count their watches")
	flag.IntVar(&o.Scale, "scale", 1000, "waiters queued on one session in the scale scenario")
	flag.DurationVar(&o.Delay, "delay", 0, "latency mode: the contenders reach the server through a proxy that delays every byte this long each way "+
		"(make bench uses 5ms), and each lock scenario gets its time in round trips, one request through that proxy being the unit; not with -ensemble")
	flag.IntVar(&o.Members, "ensemble", 0, "run on a throwaway ensemble of this many servers (3 or 5), sessions spread over them; "+
		"by default only the uncontended, mutex-8, waiters and handover scenarios, and zkrecipes against Curator")
	flag.BoolVar(&recipes, "recipes", false, "run the cache, group, counter and partition scenarios (issues 13 to 15) instead of the locks'; "+
		"by default against limit, Curator and kazoo")
	curator := os.Getenv("ZKTEST_CURATOR")
	if curator == "" {
		curator = "5.7"
	}
	flag.StringVar(&o.Peer, "peer", "build/curator-peer/"+curator, "directory of the compiled Curator peer (make curator-peer builds build/curator-peer/5.7 and 5.4; default per $ZKTEST_CURATOR)")
	zookeeper := flag.String("zookeeper", "", "ZooKeeper the driver's servers run: a version (3.9, 3.8) or a directory of its jars (default $ZKTEST_ZOOKEEPER, else the newest installed)")
	flag.StringVar(&o.Kazoo, "kazoo", "bench/kazoo-peer/kazoo_peer.py", "kazoo's peer, for the partition scenarios (scripts/deps.sh kazoo)")
	flag.StringVar(&contenders, "contenders", strings.Join(driver.AllContenders, ","), "contenders to run, in this order (and kazoo, for the partition scenarios)")
	flag.StringVar(&only, "only", "", "scenarios to run, by id (comma-separated; default all)")
	var scaleRecipes string
	flag.BoolVar(&o.scale, "curves", false, "measure how each recipe's cost grows with its size (issue 28; make bench-scale), against Curator, kazoo and, for the followers of state, our own one-shot watches, "+
		"instead of the locks' scenarios; -out names the report, its plots are written beside it")
	flag.StringVar(&scaleRecipes, "curves-recipes", strings.Join(driver.ScaleRecipes, ","), "with -curves: the recipes to measure")
	flag.BoolVar(&o.scaleCfg.Smallest, "smallest", false, "with -curves: only each recipe's smallest size (the smoke run)")
	var scaleSizes, oneShotLargest string
	flag.StringVar(&oneShotLargest, "curves-oneshot-max", "", "with -curves: the largest size the zkrecipes-oneshot contender runs, by recipe (e.g. group=300,cache=10010); default every size")
	flag.StringVar(&o.scaleCfg.Note, "note", "", "with -curves: a sentence for the report's header about the machine (what else ran on it); with -from, instead of the runs'")
	flag.StringVar(&scaleSizes, "curves-sizes", "", "with -curves: only these sizes of the recipes sized by one number (lock, group, discovery, election), comma-separated (e.g. 10,100); default all")
	flag.StringVar(&o.out, "out", defaultOut, "report to write (empty: none)")
	flag.StringVar(&o.plot, "plot", defaultPlot, "plot to write and embed in the report (empty: none)")
	flag.StringVar(&o.analysis, "analysis", defaultAnalysis, "hand-written analysis to include in the report, if the file exists")
	flag.StringVar(&o.save, "save", "build/bench-results.json", "where to keep the raw results (empty: nowhere)")
	flag.StringVar(&o.from, "from", "", "render the report from raw results saved earlier, without running anything (with -curves: several runs' files, comma-separated, merged)")
	latency := flag.String("latency", "", "raw results of a latency run (-delay, saved with -save) whose table and targets the report repeats in a section of its own (make bench runs it first)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (the Go contenders) to this file")
	flag.Parse()
	if *latency != "" {
		// Read now: a file missing or of the wrong kind fails the command before a run
		// of minutes, not after it.
		rep, err := driver.LoadReport(*latency)
		if err != nil {
			return o, fmt.Errorf("-latency: %w", err)
		}
		if rep.Settings.Delay <= 0 {
			return o, fmt.Errorf("-latency: %s holds no latency run (made without -delay)", *latency)
		}
		o.latency = rep
	}
	if *zookeeper != "" {
		// zktest's own choice of version, for every server the driver starts.
		if err := os.Setenv("ZKTEST_ZOOKEEPER", *zookeeper); err != nil {
			return o, err
		}
	}
	o.Contenders = fields(contenders)
	o.scaleCfg.Recipes, o.scaleCfg.Peer, o.scaleCfg.Kazoo = fields(scaleRecipes), o.Peer, o.Kazoo
	o.scaleCfg.Sizes = fields(scaleSizes)
	for _, f := range fields(oneShotLargest) {
		recipe, size, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(size)
		if !ok || err != nil || n < 1 {
			return o, fmt.Errorf("-curves-oneshot-max: %q is not recipe=size", f)
		}
		if o.scaleCfg.OneShotLargest == nil {
			o.scaleCfg.OneShotLargest = map[string]int{}
		}
		o.scaleCfg.OneShotLargest[recipe] = n
	}
	o.Only = fields(only)
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.scale {
		if set["contenders"] {
			o.scaleCfg.Contenders = o.Contenders
		}
		if !set["out"] {
			o.out = defaultScaleOut
		}
		if !set["save"] {
			o.save = "build/bench-scale.json"
		}
		if !set["analysis"] {
			o.analysis = defaultScaleAnalysis
		}
	}
	if recipes && o.Members > 1 {
		return o, errors.New("-recipes runs on one server; leave -ensemble out")
	}
	if recipes {
		if !set["only"] {
			o.Only = driver.RecipeScenarios()
		}
		if !set["contenders"] {
			o.Contenders = []string{"limit", "zkrecipes", "Curator", "kazoo"}
		}
	}
	if o.Members > 1 {
		if !set["only"] {
			o.Only = []string{"uncontended", "mutex-8", "waiters", "handover"}
		}
		if !set["contenders"] {
			o.Contenders = []string{"zkrecipes", "Curator"}
		}
	}
	if o.Delay < 0 || (o.Delay > 0 && (o.Members > 1 || recipes || o.scale)) {
		return o, errors.New("-delay is a positive duration, for the lock scenarios on one server: leave -ensemble, -recipes and -curves out")
	}
	if o.Delay > 0 {
		if !set["only"] {
			o.Only = []string{"uncontended", "mutex-2", "mutex-8", "rwlock-writer", "semaphore", "handover"}
		}
		if !set["contenders"] {
			o.Contenders = []string{"zkrecipes", "zk.Lock", "Curator"}
		}
	}
	if o.Members < 0 || o.Members == 2 {
		return o, errors.New("-ensemble takes 3 or more servers (an ensemble of 2 survives no failure)")
	}
	if o.Runs < 1 || o.Cycles < 1 || o.Rounds < 1 || o.Waiters < 1 || o.Scale < 1 || o.Duration <= 0 {
		return o, errors.New("counts and durations must be positive")
	}
	return o, nil
}

func fields(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	if o.scale {
		return runScale(o)
	}
	if o.from != "" {
		rep, err := driver.LoadReport(o.from)
		if err != nil {
			return err
		}
		return write(rep, o)
	}
	started := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// However the scenarios are sized, the benchmark ends by itself.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()

	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	rep, err := driver.Run(ctx, o.Config)
	if rep == nil {
		return err
	}
	if o.save != "" {
		if err := rep.Save(o.save); err != nil {
			return err
		}
	}
	if err := write(rep, o); err != nil {
		return err
	}
	driver.Say("done in %v", time.Since(started).Round(time.Second))
	if err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("%d trials failed (see the report)", len(rep.Failures))
	}
	return nil
}

// write prints the table and the targets, and writes the plot and the report.
func write(rep *driver.Report, o options) error {
	fmt.Println()
	fmt.Print(rep.Table())
	fmt.Println()
	fmt.Print(rep.TargetsText())
	if warn := rep.BusyWarning(); warn != "" {
		fmt.Println()
		fmt.Println(warn)
	}
	plot := o.plot
	if plot != "" {
		if err := drawPlot(rep, plot); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		driver.Say("wrote %s", plot)
	}
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(o.out, []byte(rep.Markdown(o.out, plot, o.analysis, o.latency)), 0o644); err != nil {
			return err
		}
		driver.Say("wrote %s", o.out)
	}
	return nil
}

// runScale runs (or, with -from, renders) the scale curves and writes their report
// and plots.
func runScale(o options) error {
	started := time.Now()
	var rep *driver.ScaleReport
	var err error
	if o.from != "" { // one run's saved points, or several runs' (a,b,...) merged
		var runs []*driver.ScaleReport
		for _, file := range fields(o.from) {
			r, err := driver.LoadScaleReport(file)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
		rep = driver.MergeScaleReports(runs...)
		if o.scaleCfg.Note != "" {
			rep.Note = o.scaleCfg.Note
		}
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Hour)
		defer cancel()
		rep, err = driver.RunScale(ctx, o.scaleCfg, os.Args[1:])
		if rep == nil {
			return err
		}
		if o.save != "" {
			if err := rep.Save(o.save); err != nil {
				return err
			}
		}
	}
	fmt.Print(rep.Table())
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		md, plots := rep.Markdown(o.out, o.analysis)
		for file, svg := range plots {
			if err := os.WriteFile(file, []byte(svg), 0o644); err != nil {
				return err
			}
		}
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return err
		}
		driver.Say("wrote %s and its plots", o.out)
	}
	driver.Say("done in %v", time.Since(started).Round(time.Second))
	if err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("%d points failed (see the report)", len(rep.Failures))
	}
	return nil
}
