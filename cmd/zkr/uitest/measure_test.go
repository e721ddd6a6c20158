package uitest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestMeasure measures, and asserts nothing: the page's first paint, first
// render of the data and JavaScript heap with 10,000 and 100,000 nodes under zkr
// ui's path (all children of one node, the largest listing), zkr ui's time to
// load them and its resident memory; then the time from a change (from before the
// write is sent) to the page showing it, over 200 changes.
//
//	cd cmd/zkr/uitest && ZKR_UI_MEASURE=1 go test -run TestMeasure -v -timeout 30m
func TestMeasure(t *testing.T) {
	if os.Getenv("ZKR_UI_MEASURE") == "" {
		t.Skip("a measurement, not a test: ZKR_UI_MEASURE=1 runs it")
	}
	srv := zktest.NewServer(t, zktest.WithHeapMB(1024))
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	var small *ui
	for _, n := range []int{10_000, 100_000} {
		root := fmt.Sprintf("/big%d", n)
		start := time.Now()
		populate(ctx, t, c, root, n)
		t.Logf("%d nodes: created in %v", n, time.Since(start).Round(time.Millisecond))
		start = time.Now()
		u := startUI(t, srv.Addr(), root)
		t.Logf("%d nodes: zkr ui loaded them in %v; its resident memory %s", n, time.Since(start).Round(time.Millisecond), rss(u.cmd.Process.Pid))
		tb := u.open(t, root)
		paint := eval[float64](tb, `performance.getEntriesByName("first-contentful-paint")[0].startTime`)
		rendered := eval[float64](tb, `performance.getEntriesByName("zkr-rendered")[0].startTime`)
		heap := eval[float64](tb, `performance.memory.usedJSHeapSize`)
		t.Logf("%d nodes: first contentful paint %.0f ms, first render of the data %.0f ms, JS heap %.1f MB, %d children listed of %d",
			n, paint, rendered, heap/1e6, eval[int](tb, `document.querySelectorAll("#children li").length`), n)
		if small == nil {
			small = u
		}
	}

	const changes = 200
	p := "/big10000/n000000"
	tb := small.open(t, p)
	eval[bool](tb, `(() => {
		window.__seen = {};
		new MutationObserver(() => {
			const d = document.getElementById("data");
			if (d && !(d.textContent in window.__seen)) window.__seen[d.textContent] = performance.timeOrigin + performance.now();
		}).observe(document.getElementById("node"), {childList: true, subtree: true, characterData: true});
		return true;
	})()`)
	lat := make([]float64, 0, changes)
	for i := range changes {
		v := fmt.Sprintf("v%03d", i)
		sent := float64(time.Now().UnixMicro()) / 1000
		_, err := c.Set(ctx, p, []byte(v), -1)
		require.NoError(t, err)
		tb.waitFor("the change shown", `window.__seen["`+v+`"] !== undefined`)
		lat = append(lat, eval[float64](tb, `window.__seen["`+v+`"]`)-sent)
	}
	slices.Sort(lat)
	t.Logf("change to page, %d changes: p50 %.1f ms, p99 %.1f ms, max %.1f ms", changes, lat[changes/2], lat[changes*99/100], lat[changes-1])
}

// populate creates root and n children under it, in transactions of 1000.
func populate(ctx context.Context, t *testing.T, c *framework.Client, root string, n int) {
	t.Helper()
	_, err := c.Create(ctx, root, nil)
	require.NoError(t, err)
	const batch = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n/batch+1)
	sem := make(chan struct{}, 4)
	for from := 0; from < n; from += batch {
		ops := make([]framework.Op, 0, batch)
		for i := from; i < min(from+batch, n); i++ {
			ops = append(ops, framework.CreateOp(fmt.Sprintf("%s/n%06d", root, i), []byte("some data")))
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, err := c.Multi(ctx, ops...)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// rss is a process's resident memory, from /proc.
func rss(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
