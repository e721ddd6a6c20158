package uitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// repoRoot is the library's module, which builds zkr.
const repoRoot = "../../.."

var (
	zkrBin  string          // built by TestMain
	browser context.Context // one headless Chromium; each test opens tabs in it
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "zkr-uitest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	zkrBin = filepath.Join(dir, "zkr")
	// go test puts its own Go's bin first in PATH: "go" is the Go that runs the test.
	build := exec.Command("go", "build", "-o", zkrBin, "./cmd/zkr")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building zkr: %v\n%s", err, out)
		return 1
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		fmt.Fprintln(os.Stderr, "uitest: no chromium on PATH; make deps installs it (Debian's chromium package)")
		return 1
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium")), chromedp.WindowSize(1100, 800))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	var cancelBrowser context.CancelFunc
	browser, cancelBrowser = chromedp.NewContext(allocCtx)
	if err := chromedp.Do(browser); err != nil { // starts it
		fmt.Fprintln(os.Stderr, "uitest: starting chromium:", err)
		cancelBrowser()
		cancelAlloc()
		return 1
	}
	code := m.Run()
	cancelBrowser()
	cancelAlloc()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// ui is one zkr ui process.
type ui struct {
	url string
	cmd *exec.Cmd
}

// startUI runs zkr ui on a free loopback port and returns once it serves.
func startUI(t *testing.T, servers string, args ...string) *ui {
	t.Helper()
	cmd := exec.Command(zkrBin, append([]string{"--servers", servers, "ui", "--listen", "127.0.0.1:0"}, args...)...)
	var stderr zkrtest.SyncBuffer
	cmd.Stderr = &stderr
	_, lines := zkrtest.StartLines(t, cmd)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range lines {
		}
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("zkr ui stderr:\n%s", stderr.String())
		}
	})
	select {
	case line, ok := <-lines:
		require.True(t, ok, "zkr ui ended: %s", stderr.String())
		require.Regexp(t, `^http://127\.0\.0\.1:[0-9]+/\?token=[A-Z2-7]+$`, line)
		return &ui{url: line, cmd: cmd}
	case <-time.After(zkrtest.Wait):
		t.Fatalf("zkr ui printed no URL: %s", stderr.String())
		return nil
	}
}

// tab is one browser tab on a zkr ui page.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// recordViolations runs in every document before the page's own script: it
// counts the Content-Security-Policy's refusals, which a name or datum parsed
// as markup would cause even where the policy stops it from running.
const recordViolations = `window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.sample));`

// open opens the page at the node p (the #fragment) in a new tab, by the URL zkr ui
// printed (its token included), as an operator does.
func (u *ui) open(t *testing.T, p string) *tab {
	t.Helper()
	tb := newTab(t)
	tb.do(chromedp.Navigate(u.url + "#" + p))
	tb.waitFor("the page connected", `document.getElementById("conn").dataset.connection === "connected" && window.zkrUI.renders > 0`)
	return tb
}

// newTab opens a blank tab that records the page's policy violations.
func newTab(t *testing.T) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	// The first action on a tab makes it, for as long as its context lives: no
	// timeout on that one.
	require.NoError(t, chromedp.Do(ctx))
	tb := &tab{t: t, ctx: ctx}
	tb.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordViolations})
		return err
	}))
	return tb
}

func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, zkrtest.Wait)
	defer cancel()
	require.NoError(tb.t, chromedp.Do(ctx, actions...))
}

// waitFor waits, at most zkrtest.Wait, for a JavaScript condition to hold, and
// returns how long it took (logged, never asserted).
func (tb *tab) waitFor(what, cond string) time.Duration {
	tb.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(tb.ctx, zkrtest.Wait)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+cond+")", chromedp.WithPollingInterval(10*time.Millisecond)))
	require.NoError(tb.t, err, "waiting for %s: %s", what, cond)
	return time.Since(start)
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, zkrtest.Wait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(tb.t, err, expr)
	return v
}

// screenshot keeps a PNG of the page in the screenshots directory.
func (tb *tab) screenshot(name string) string {
	tb.t.Helper()
	dir := os.Getenv("ZKR_UI_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(repoRoot, "build", "ui-screenshots")
	}
	require.NoError(tb.t, os.MkdirAll(dir, 0o755))
	ctx, cancel := context.WithTimeout(tb.ctx, zkrtest.Wait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(tb.t, err)
	file := filepath.Join(dir, name+".png")
	require.NoError(tb.t, os.WriteFile(file, png, 0o644))
	tb.t.Logf("screenshot: %s", file)
	return file
}

func chromedpClick(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(sel))
}

// emulatePhone makes the tab's viewport a phone's, 390 by 844.
func emulatePhone() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(390, 844)
}
