package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/zktest"
)

var (
	chaosSample = flag.Duration("chaos.sample", 0, "soak mode: sample the clients' goroutines and heap and the servers' watches and nodes this often, "+
		"and fail on growth that does not level off (make soak)")
	chaosPlot = flag.String("chaos.plot", "", "with -chaos.sample, also draw the samples' curves in this SVG file")
)

// A series is one quantity sampled through a soak: the clients' goroutines and live
// heap (the clients all live in this process; chaos_heap_test.go tells their heap
// from the run's record), and the servers' watches (wchs, summed over the members)
// and nodes (mntr's zk_znode_count).
type series struct {
	name     string
	unit     string
	slack    float64 // growth below this, in unit, is noise
	unjudged bool    // shown, never a violation: the test's record of the run grows by design
	at       []time.Duration
	v        []float64
}

type sampler struct {
	e      *zktest.Ensemble
	every  time.Duration
	began  time.Time
	series []*series
	owners heapOwners
}

func newSampler(e *zktest.Ensemble, every time.Duration) *sampler {
	return &sampler{e: e, every: every, began: time.Now(), series: []*series{
		{name: "goroutines", slack: 50},
		{name: "client heap", unit: "MiB", slack: 4},
		{name: "watches", slack: 30},
		{name: "nodes", slack: 30},
		{name: "test heap", unit: "MiB", unjudged: true},
	}, owners: heapOwners{}}
}

// run samples until ctx ends.
func (s *sampler) run(ctx context.Context) {
	for pause(ctx, s.every) {
		s.take()
	}
}

func (s *sampler) take() {
	heap := s.owners.take()
	watches, nodes := s.serverCounts()
	at := time.Since(s.began)
	for i, v := range []float64{float64(runtime.NumGoroutine()), heap.clients / (1 << 20), watches, nodes, heap.test / (1 << 20)} {
		if v >= 0 {
			s.series[i].at = append(s.series[i].at, at)
			s.series[i].v = append(s.series[i].v, v)
		}
	}
}

// serverCounts sums the members' watches and reads the leader's node count; -1 for
// what no member answered (the leader may be down when the sample is taken).
func (s *sampler) serverCounts() (watches, nodes float64) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	watches, nodes = -1, -1
	for i := range s.e.Addrs() {
		if out, err := s.e.FourLetter(ctx, i, "wchs"); err == nil {
			if n, ok := statLine(out, "Total watches:"); ok {
				watches = max(watches, 0) + n
			}
		}
		if out, err := s.e.FourLetter(ctx, i, "mntr"); err == nil && strings.Contains(out, "zk_server_state\tleader") {
			if n, ok := statLine(out, "zk_znode_count\t"); ok {
				nodes = n
			}
		}
	}
	return watches, nodes
}

// statLine reads the number after prefix on its line of a four-letter word's answer.
func statLine(out, prefix string) (float64, bool) {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return n, err == nil
		}
	}
	return 0, false
}

// thirds are the medians of the series' first, middle and last thirds, leaving out
// the first tenth (the clients starting, the servers warming up).
func (se *series) thirds() (a, b, c float64, ok bool) {
	v := se.v[len(se.v)/10:]
	if len(v) < 9 {
		return 0, 0, 0, false
	}
	n := len(v) / 3
	return median(v[:n]), median(v[n : 2*n]), median(v[2*n:]), true
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// growing reports a series that grew from its first third to its middle one and
// again from its middle one to its last: growth that has not levelled off.
func (se *series) growing() bool {
	if se.unjudged {
		return false
	}
	a, b, c, ok := se.thirds()
	grew := func(from, to float64) bool { return to-from > max(se.slack, 0.1*from) }
	return ok && grew(a, b) && grew(b, c)
}

// problems are the soak's violations.
func (s *sampler) problems() []string {
	if s == nil {
		return nil
	}
	var ps []string
	for _, se := range s.series {
		if se.growing() {
			a, b, c, _ := se.thirds()
			ps = append(ps, fmt.Sprintf("soak: %s kept growing: medians of the run's thirds %.1f, %.1f, %.1f%s", se.name, a, b, c, se.unit))
		}
	}
	return ps
}

// String is the soak's part of the report: each series as a sparkline, with its
// range and the medians of its thirds.
func (s *sampler) String() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "soak: a sample every %v, %d samples\n", s.every, len(s.series[0].v))
	for _, se := range s.series {
		if len(se.v) == 0 {
			fmt.Fprintf(&b, "  %-11s no samples\n", se.name)
			continue
		}
		verdict := "too few samples to judge"
		if a, m, c, ok := se.thirds(); ok {
			verdict = fmt.Sprintf("thirds' medians %.1f → %.1f → %.1f%s", a, m, c, se.unit)
			switch {
			case se.unjudged:
				verdict += ": the test's own (its record of the run grows with it), not judged"
			case se.growing():
				verdict += ": STILL GROWING"
			default:
				verdict += ": levels off"
			}
		}
		fmt.Fprintf(&b, "  %-11s %s  %.1f–%.1f%s, %s\n", se.name, sparkline(se.v, 60), slices.Min(se.v), slices.Max(se.v), se.unit, verdict)
	}
	return b.String()
}

// sparkline draws v in at most width block characters, each the mean of its share.
func sparkline(v []float64, width int) string {
	const bars = "▁▂▃▄▅▆▇█"
	blocks := []rune(bars)
	lo, hi := slices.Min(v), slices.Max(v)
	n := min(width, len(v))
	var b strings.Builder
	for i := range n {
		part := v[i*len(v)/n : (i+1)*len(v)/n]
		sum := 0.0
		for _, x := range part {
			sum += x
		}
		level := 0
		if hi > lo {
			level = int((sum/float64(len(part)) - lo) / (hi - lo) * float64(len(blocks)-1))
		}
		b.WriteRune(blocks[level])
	}
	return b.String()
}

// plot writes the series as an SVG: one panel each, time across.
func (s *sampler) plot(path string) error {
	const w, h, pad = 640, 110, 24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h*len(s.series))
	for i, se := range s.series {
		top := i * h
		fmt.Fprintf(&b, `<rect x="0" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>`+"\n", top, w, h)
		if len(se.v) == 0 {
			continue
		}
		lo, hi := slices.Min(se.v), slices.Max(se.v)
		fmt.Fprintf(&b, `<text x="4" y="%d">%s: %.1f–%.1f%s over %v</text>`+"\n", top+14, se.name, lo, hi, se.unit,
			se.at[len(se.at)-1].Round(time.Second))
		span := max(float64(se.at[len(se.at)-1]), 1)
		var pts []string
		for k, v := range se.v {
			x := pad + float64(se.at[k])/span*float64(w-2*pad)
			y := float64(top+h-6) - (v-lo)/max(hi-lo, 1)*float64(h-pad-6)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="%s"/>`+"\n", strings.Join(pts, " "))
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
