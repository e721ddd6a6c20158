package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/bench/internal/driver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// root is the repository's root: `make bench` runs the driver from there, and its
// paths are relative to it; go test runs in bench/.
const root = ".."

// The reports live in docs/benchmarks/: the driver's defaults, the Makefile's
// targets and the telemetry script write there, beside the reports already there.
func TestReportPaths(t *testing.T) {
	for _, f := range []string{defaultOut, defaultScaleOut} {
		require.Equal(t, reportDir, filepath.Dir(f))
	}
	for _, f := range []string{defaultOut, defaultScaleOut, defaultPlot, defaultAnalysis, defaultScaleAnalysis} {
		_, err := os.Stat(filepath.Join(root, f))
		require.NoError(t, err, "%s is not in the repository", f)
	}

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	require.Contains(t, string(makefile), "BENCH_DIR := "+reportDir+"\n")
	outs := regexp.MustCompile(`-out (\S+)`).FindAllStringSubmatch(string(makefile), -1)
	require.Len(t, outs, 5, "bench's four reports and bench-scale's")
	for _, out := range outs {
		file := strings.Replace(out[1], "$(BENCH_DIR)", reportDir, 1)
		require.Equal(t, reportDir, filepath.Dir(file), "the Makefile writes %s", out[1])
		_, err := os.Stat(filepath.Join(root, file))
		require.NoError(t, err, "the Makefile writes %s, which is not in the repository", out[1])
	}
	require.Contains(t, string(makefile), "scripts/bench-telemetry.sh $(BENCH_DIR)/BENCHMARKS-telemetry.md\n")
	script, err := os.ReadFile(filepath.Join(root, "scripts", "bench-telemetry.sh"))
	require.NoError(t, err)
	require.Contains(t, string(script), "OUT=${1:-"+reportDir+"/BENCHMARKS-telemetry.md}\n")
}

// A report written where make bench writes it links its plot by a path that
// resolves from there; the scale report's plots are written beside it.
func TestReportLinksFromItsPlace(t *testing.T) {
	md := (&driver.Report{}).Markdown(defaultOut, defaultPlot, "", nil)
	require.Contains(t, md, "](../../bench/benchmarks.png)")
	_, err := os.Stat(filepath.Join(root, filepath.Dir(defaultOut), "../../bench/benchmarks.png"))
	require.NoError(t, err)

	scale := &driver.ScaleReport{Points: []driver.ScalePoint{{Recipe: "partition", Contender: "zkrecipes", Size: 96, Label: "24 × 4",
		Figures: map[string]float64{}}}}
	md, plots := scale.Markdown(defaultScaleOut, "")
	require.Contains(t, md, "](BENCHMARKS-scale-partition.svg)")
	require.Contains(t, plots, reportDir+"/BENCHMARKS-scale-partition.svg")
}

// Every relative link of the reports in docs/benchmarks/ (the plots above all), and
// every link to them from the docs and the README, resolves.
func TestReportLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	reports, err := filepath.Glob(filepath.Join(root, reportDir, "*.md"))
	require.NoError(t, err)
	require.Len(t, reports, 6)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	bench, err := filepath.Glob("*.md")
	require.NoError(t, err)
	files := append(append(append(reports, docs...), bench...), filepath.Join(root, "README.md"))
	for _, file := range files {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		ofReports := strings.HasPrefix(file, filepath.Join(root, reportDir))
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if !ofReports && !strings.Contains(target, "benchmarks") && !strings.Contains(target, "BENCHMARKS") {
				continue // the docs' other links are not this test's
			}
			_, err := os.Stat(filepath.Join(filepath.Dir(file), target))
			require.NoError(t, err, "%s links %s", file, m[1])
		}
		require.NotContains(t, string(text), "](../BENCHMARKS", "%s links a report at the root", file)
	}
}
