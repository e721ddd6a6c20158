package driver

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Save writes the raw points as JSON, for -from.
func (r *ScaleReport) Save(file string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// LoadScaleReport reads what Save wrote.
func LoadScaleReport(file string) (*ScaleReport, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r ScaleReport
	return &r, json.Unmarshal(b, &r)
}

// MergeScaleReports puts the points of several runs into one report (a recipe run
// again on its own, say), each run's command named; the machine is the first's.
func MergeScaleReports(runs ...*ScaleReport) *ScaleReport {
	m := &ScaleReport{Machine: runs[0].Machine}
	for _, r := range runs {
		m.Commands = append(m.Commands, r.Commands...)
		for _, p := range r.Points {
			if p.Measured.IsZero() {
				p.Measured = r.Date
			}
			m.Points = append(m.Points, p)
		}
		m.Failures = append(m.Failures, r.Failures...)
		m.Skipped = append(m.Skipped, r.Skipped...)
		if m.Note == "" {
			m.Note = r.Note
		}
		m.Elapsed += r.Elapsed
		m.Busy = max(m.Busy, r.Busy)
		if r.Date.After(m.Date) {
			m.Date = r.Date
		}
	}
	return m
}

// recipes lists the recipes that have points, in ScaleRecipes' order.
func (r *ScaleReport) recipes() []string {
	var out []string
	for _, name := range ScaleRecipes {
		if slices.ContainsFunc(r.Points, func(p ScalePoint) bool { return p.Recipe == name }) {
			out = append(out, name)
		}
	}
	return out
}

// series is one contender's points of one recipe, by size.
func (r *ScaleReport) series(recipe string) (contenders []string, bySize map[string][]ScalePoint) {
	bySize = map[string][]ScalePoint{}
	for _, p := range r.Points {
		if p.Recipe != recipe {
			continue
		}
		if !slices.Contains(contenders, p.Contender) {
			contenders = append(contenders, p.Contender)
		}
		bySize[p.Contender] = append(bySize[p.Contender], p)
	}
	for _, ps := range bySize {
		slices.SortFunc(ps, func(a, b ScalePoint) int { return a.Size - b.Size })
	}
	return contenders, bySize
}

// Table is the figures as text, one table per recipe.
func (r *ScaleReport) Table() string {
	var b strings.Builder
	for _, recipe := range r.recipes() {
		contenders, bySize := r.series(recipe)
		var sizes []string
		for _, c := range contenders {
			for _, p := range bySize[c] {
				if !slices.Contains(sizes, p.Label) {
					sizes = append(sizes, p.Label)
				}
			}
		}
		header := []string{"figure (" + scaleUnit[recipe] + ")", "contender"}
		header = append(header, sizes...)
		var rows [][]string
		for _, f := range scaleFigures {
			if f.recipe != recipe {
				continue
			}
			for _, c := range contenders {
				row := []string{f.label, c}
				any := false
				for _, size := range sizes {
					cell := "—"
					for _, p := range bySize[c] {
						if v, ok := p.Figures[f.id]; ok && p.Label == size && !math.IsNaN(v) && !(f.id == "heap" && v == 0) {
							cell, any = formatScale(v), true
						}
					}
					row = append(row, cell)
				}
				if any {
					rows = append(rows, row)
				}
			}
		}
		fmt.Fprintf(&b, "\n### %s\n\n", scaleTitle[recipe])
		if when := r.measured(recipe); when != "" {
			b.WriteString(when + "\n\n")
		}
		b.WriteString(markdownTable(header, rows))
	}
	return b.String()
}

// measured says when recipe's points were measured, if by a run earlier than the
// report's latest (merged from several runs); else "".
func (r *ScaleReport) measured(recipe string) string {
	var dates []string
	for _, p := range r.Points {
		if p.Recipe != recipe || p.Measured.IsZero() || p.Measured.Equal(r.Date) {
			continue
		}
		if d := p.Measured.Format("2006-01-02 15:04 UTC"); !slices.Contains(dates, d) {
			dates = append(dates, d)
		}
	}
	if len(dates) == 0 {
		return ""
	}
	return "*Measured by an earlier run, ended " + strings.Join(dates, " and ") + ", and kept: not run again for this report.*"
}

var scaleTitle = map[string]string{
	"lock":      "Lock queue: waiters on one lock",
	"cache":     "Cache: nodes in one cache",
	"partition": "Partitioner: items × members",
	"assign":    "Partitioner's assignment (partition.Assign, in this process): items × members",
	"group":     "Group: members, each following the group",
	"discovery": "Discovery: instances of one service, one provider following it",
	"election":  "Election: candidates of one leader latch",
}

var scaleUnit = map[string]string{"lock": "waiters", "cache": "nodes", "partition": "items × members", "assign": "items × members",
	"group": "members", "discovery": "instances", "election": "candidates"}

func formatScale(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a > 0 && a < 0.01: // a tree's few watches spread over its nodes
		return fmt.Sprintf("%.2g", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func markdownTable(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
		if i >= 2 {
			sep[i] = "---:"
		}
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

// Markdown is the report: how it was made, the machine, each recipe's table and its
// plot (written beside out as <out without .md>-<recipe>.svg).
func (r *ScaleReport) Markdown(out string, analysis string) (string, map[string]string) {
	var b strings.Builder
	b.WriteString("# Benchmarks: how the cost grows\n\n")
	b.WriteString("Each recipe at sizes spanning two orders of magnitude, each figure divided by the unit of size (a waiter, a cached node, a member): " +
		"a flat curve is a cost that grows as the size does, a rising one grows faster. " +
		"zkrecipes beside Apache Curator (through `bench/curator-peer`) and, for the partitioner, kazoo's SetPartitioner (`bench/kazoo-peer`; Curator has no partitioner), on the same server in the same run. " +
		"The followers of state (the cache, the group and discovery) also run as zkrecipes-oneshot: the same recipes on clients made with `framework.WithOneShotWatches()`, " +
		"as on a server without persistent watches, and as every follower ran before issue 36.\n\n")
	quality := "times measured on a quiet machine"
	if r.Busy > 0.1 {
		quality = "counts measured on a busy machine; times to be re-measured on a quiet one"
	}
	fmt.Fprintf(&b, "**%s%s** (other processes kept %.0f%% of the CPUs busy during the run). "+
		"Requests (the server's `zk_packets_received`, less the driver's own four-letter words), bytes the server sent (mntr's `zk_response_bytes`), "+
		"server watches (`wchs`, `wchp`) and client heap (after a collection) do not depend on the machine's load; the times (plots marked *) do.\n\n",
		strings.ToUpper(quality[:1]), quality[1:], 100*r.Busy)
	if r.Note != "" {
		b.WriteString("**" + strings.TrimSpace(r.Note) + "**\n\n")
	}
	fmt.Fprintf(&b, "Generated by `make bench-scale` on %s; the runs took %v in all, each on a ZooKeeper server of its own:\n\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Elapsed.Round(1e9))
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", strings.Join(r.Commands, "\n"))
	b.WriteString("## Machine\n\n| | |\n|---|---|\n")
	for _, m := range r.Machine {
		fmt.Fprintf(&b, "| %s | %s |\n", m[0], m[1])
	}
	b.WriteString("\n## What is measured\n\n" +
		"- **Lock queue**: a holder holds the lock while N waiters, spread over at most 20 sessions, queue behind it; the server's watches are counted once they all wait, then the holder releases and each waiter acquires once and releases. Requests cover the queueing and the drain, per acquisition. Heap is this process's live heap after a collection, per waiter (zkrecipes only: the peer's is not counted).\n" +
		"- **Cache**: a tree of three levels is made (untimed), then one cache of it loads; requests from its start until it is initialized, per node; the server's watches while it is open, per node. " +
		"Then, while it is open, another session makes " + fmt.Sprint(cacheChangeRounds) + " rounds of three changes, one at a time: a leaf created beside the 99 of a node of the second level, one of those leaves set, the new leaf deleted; " +
		"each until the cache has it (ours; the peer's is not asked) and the server's request count has been still for 100 ms. Requests per change are the server's, less the writes themselves; bytes per change include the writes' replies (the same for every contender). " +
		"Curator's figures are its CuratorCache's (one persistent recursive watch on ZooKeeper 3.6+, as ours on persistent watches; see DESIGN.md), its heap the peer JVM's used heap after `System.gc()`.\n" +
		"- **Partitioner**: I items over M members, each its own session; once they share the items the server's watches are counted (all of the run's sessions', per member); then a member joins and, once that has settled, a member picked at random leaves; each change is measured until every item runs on exactly one member with balanced shares and nothing has moved for 300 ms. Requests per rebalance are the requests the servers received from the change until they stopped, per member.\n" +
		"- **Assignment**: `partition.Assign`, which every member runs on every change it sees, in the driver's process without a server: I items over M members from nothing (every item placed by rendezvous, as when members start together) and after a join (a settled assignment over M−1 of them, as every member computes once the M-th joins); each timed in " + fmt.Sprint(assignRounds) + " rounds of " + assignRound.String() + " or more, the median call's time divided by I × M; the bytes one call allocates (`runtime.MemStats`), divided by I + M.\n" +
		"- **Group**: M members, each on a session of its own (members sharing a session would share the server's watches on a path) and each following the group (ours, in both modes, made with `group.FixedPayload()`: they never change their payload, so that on one-shot watches no member watches another's node; on a persistent watch the option changes no count), are started until every one's view has all M; heap is this process's (or the peer JVM's, after `System.gc()`) from after their sessions connected, divided by M² (every member knows every member). The server's watches are counted then: on the group's path and below it (`wchp`), and all of them (`wchs`; Curator's sessions each watch `/zookeeper/config`). Then another session joins " + fmt.Sprint(scaleRounds) + " members, one at a time; each join is timed until an existing member's view has it, then the member leaves, untimed, until the view has let it go. Requests and bytes cover the joins and leaves, per round and per member (every member must hear both); the joining session's requests, read from the server's `cons` (each connection's requests received, by session id) around the rounds, are told from the members' own, and shown per round.\n" +
		"- **Discovery**: N instances of one service are registered on one session, then a provider of the service starts on another (heap: what it took, per instance, as for the group); the server's watches on the service's path are counted; then the first session registers " + fmt.Sprint(scaleRounds) + " instances, one at a time, each timed until the provider knows it, then unregisters it, untimed, until the provider has let it go. Curator's provider is curator-x-discovery's ServiceProvider over its ServiceCache. Requests and bytes per round (a registration and an unregistration); the registrar's session's requests, read from `cons` as for the group, are told from the provider's.\n" +
		"- **Election**: N candidates of one leader latch (LeaderLatch), spread over at most 20 sessions, join; the server's watches on the election are counted once they all wait; then " + fmt.Sprint(scaleRounds) + " times the leader closes its latch, timed until the next candidate's listener hears it leads, and the old leader's session joins again at the back. Requests and bytes per hand-over cover the leave, what the next leader does to know it leads, and the rejoin.\n\n")
	if analysis != "" {
		if text, err := os.ReadFile(analysis); err == nil {
			b.WriteString(strings.TrimSpace(string(text)) + "\n\n")
		}
	}
	b.WriteString(r.goalsMarkdown())
	b.WriteString("\n## Results\n")
	plots := map[string]string{}
	base := strings.TrimSuffix(out, filepath.Ext(out))
	for _, recipe := range r.recipes() {
		file := base + "-" + recipe + ".svg"
		plots[file] = r.svg(recipe)
		fmt.Fprintf(&b, "\n![%s](%s)\n", scaleTitle[recipe], filepath.Base(file))
	}
	b.WriteString(r.Table())
	if len(r.Skipped) > 0 {
		b.WriteString("\n## Left out\n\n")
		for _, f := range r.Skipped {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if len(r.Failures) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String(), plots
}
