package uitest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/group"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/partition"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// sessionTimeout is the holders' session timeout: the server expires a session
// cut off for that long.
const sessionTimeout = 2 * time.Second

// holders is the page's queue as "id:state ...", in queue order.
const holders = `[...document.querySelectorAll("#recipe tr[data-state]")].map((r) => r.dataset.id + ":" + r.dataset.state).join(" ")`

// A lock taken by another client shows on the page with its holder, then a waiter
// behind it; when the holder's session expires the waiter holds, and the page
// shows the hand-over; then the release.
func TestPageFollowsALock(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	u := startUI(t, srv.Addr())
	tb := u.open(t, "/locks/nightly-report")

	proxy := zktest.NewProxy(t, srv.Addr())
	a, err := mutex.New(zkrtest.Client(t, []string{proxy.Addr()}, framework.WithSessionTimeout(sessionTimeout)),
		"/locks/nightly-report", mutex.WithID("replica-a"))
	require.NoError(t, err)
	require.NoError(t, a.Acquire(ctx))
	took := tb.waitFor("replica-a holding", holders+` === "replica-a:holder"`)
	t.Logf("the holder showed %v after Acquire returned", took)

	b, err := mutex.New(zkrtest.Client(t, []string{srv.Addr()}), "/locks/nightly-report", mutex.WithID("replica-b"))
	require.NoError(t, err)
	acquired := make(chan error, 1)
	go func() { acquired <- b.Acquire(ctx) }()
	tb.waitFor("replica-b waiting", holders+` === "replica-a:holder replica-b:waiting"`)
	tb.screenshot("lock-held-and-waiting")

	require.NoError(t, proxy.ExpireSession(ctx, sessionTimeout))
	require.NoError(t, <-acquired)
	tb.waitFor("the hand-over to replica-b", holders+` === "replica-b:holder"`)
	tb.waitFor("the hand-over in the timeline",
		`[...document.querySelectorAll("#changes li")].map((l) => l.dataset.holders).join(",") === "replica-a,replica-b"`)
	tb.screenshot("lock-handed-over")

	require.NoError(t, b.Release(ctx))
	tb.waitFor("the release", `document.querySelectorAll("#recipe tr[data-state]").length === 0`)
	require.Empty(t, eval[[]string](tb, "window.__violations"))
}

// An election's leader shows, and the next leader once it steps down; a group's
// members show as they join.
func TestPageFollowsLeadership(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	u := startUI(t, srv.Addr())
	tb := u.open(t, "/scheduler")

	latch := func(id string) *election.Latch {
		l, err := election.NewLatch(zkrtest.Client(t, []string{srv.Addr()}), "/scheduler", election.WithID(id))
		require.NoError(t, err)
		require.NoError(t, l.Start(ctx))
		return l
	}
	first := latch("sched-1")
	require.NoError(t, first.Await(ctx))
	second := latch("sched-2")
	tb.waitFor("sched-1 leading, sched-2 behind", holders+` === "sched-1:leader sched-2:waiting"`)
	require.NoError(t, first.Close(ctx))
	require.NoError(t, second.Await(ctx))
	tb.waitFor("sched-2 leading", holders+` === "sched-2:leader"`)
	require.NoError(t, second.Close(ctx))
}

// While zkr ui's connection to ZooKeeper is cut, the page says Suspended and
// greys out its picture, rather than showing it as current; then it is current
// again.
func TestPageSaysSuspended(t *testing.T) {
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	u := startUI(t, proxy.Addr(), "--session-timeout", "4s")
	tb := u.open(t, "/")
	proxy.Cut()
	tb.waitFor("suspended", `document.getElementById("conn").dataset.connection === "suspended" && document.body.classList.contains("stale") && !document.getElementById("banner").hidden`)
	tb.screenshot("suspended")
	proxy.Restore()
	tb.waitFor("connected", `document.getElementById("conn").dataset.connection === "connected" && !document.body.classList.contains("stale")`)
}

// Names and data that are markup show as text and run nothing: no handler ran,
// no element was made of them, and the page's policy refused nothing (it would
// refuse an inline handler that a name parsed as markup brought in).
func TestPageShowsMarkupAsText(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	const (
		scriptName = "<script>" // a name cannot hold the closing tag's slash
		imgName    = `<img src=x onerror="window.__ran='img name'">`
		imgData    = `"><img src=x onerror="window.__ran='data'">`
	)
	for _, p := range []string{"/x", "/x/" + scriptName, "/x/" + imgName} {
		_, err := c.Create(ctx, p, []byte(imgData))
		require.NoError(t, err)
	}
	u := startUI(t, srv.Addr())
	tb := u.open(t, "/x")
	names := `[...document.querySelectorAll("#children a")].map((a) => a.textContent)`
	tb.waitFor("both names listed", names+`.length === 2`)
	require.ElementsMatch(t, []string{scriptName, imgName}, eval[[]string](tb, names))
	require.Equal(t, imgData, eval[string](tb, `document.getElementById("data").textContent`))

	tb.do(chromedpClick(`#children a`)) // into the first child: its name in the path
	tb.waitFor("the child shown", `window.zkrUI.path !== "/x"`)
	crumbs := eval[string](tb, `document.getElementById("crumbs").textContent`)
	require.True(t, strings.Contains(crumbs, scriptName) || strings.Contains(crumbs, imgName), crumbs)
	tb.screenshot("markup-as-text")

	require.Zero(t, eval[int](tb, `document.querySelectorAll("img, script:not([src])").length`))
	require.Equal(t, "none", eval[string](tb, `window.__ran === undefined ? "none" : window.__ran`))
	require.Empty(t, eval[[]string](tb, "window.__violations"))
}

// A node's stat shows as zkr stat prints it (the one schema of /api/node and
// zkr stat --json): the server's times, the zxids in decimal, the owner in hex.
func TestPageShowsTheStat(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	_, err := c.Create(ctx, "/stat", []byte("x"), framework.Ephemeral())
	require.NoError(t, err)
	_, st, err := c.Get(ctx, "/stat")
	require.NoError(t, err)
	u := startUI(t, srv.Addr())
	tb := u.open(t, "/stat")
	tb.waitFor("the stat", `document.querySelectorAll("table.stat tr").length > 0`)
	rows := eval[map[string]string](tb, `Object.fromEntries([...document.querySelectorAll("table.stat tr")].map((r) => [r.cells[0].textContent, r.cells[1].textContent]))`)
	require.Equal(t, time.UnixMilli(st.Ctime).UTC().Format(time.RFC3339Nano), rows["created"])
	require.Equal(t, time.UnixMilli(st.Mtime).UTC().Format(time.RFC3339Nano), rows["modified"])
	require.Equal(t, fmt.Sprint(st.Czxid), rows["czxid"])
	require.Equal(t, fmt.Sprint(st.Mzxid), rows["mzxid"])
	require.Equal(t, fmt.Sprintf("%#x", c.SessionID()), rows["ephemeral owner"])
	require.Equal(t, "1", rows["data length"])
}

// A phone-sized window shows the queue without a horizontal scroll of the page
// itself (tables scroll inside their section); a hold older than --hold-warn is
// highlighted.
func TestPageFitsAPhone(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	a, err := mutex.New(zkrtest.Client(t, []string{srv.Addr()}), "/locks/backup", mutex.WithID("a-rather-long-participant-id-from-host-17"))
	require.NoError(t, err)
	require.NoError(t, a.Acquire(ctx))
	u := startUI(t, srv.Addr(), "--hold-warn", "1s")
	tb := u.open(t, "/locks/backup")
	tb.do(emulatePhone())
	tb.waitFor("the holder", holders+` !== ""`)
	tb.waitFor("the long hold highlighted", `document.querySelector("#recipe tr.long[data-state=holder]") !== null`)
	require.LessOrEqual(t, eval[int](tb, `document.documentElement.scrollWidth`), eval[int](tb, `window.innerWidth`))
	tb.screenshot("phone")
	release, cancel := context.WithTimeout(context.Background(), zkrtest.Wait)
	defer cancel()
	require.NoError(t, a.Release(release))
}

// A partition shows each item's owner and each member's share.
func TestPageShowsAPartition(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	p, err := partition.New(zkrtest.Client(t, []string{srv.Addr()}), "/jobs", func(ctx context.Context, _ partition.Item) error {
		<-ctx.Done()
		return nil
	}, partition.Items("job-1", "job-2", "job-7"), partition.WithID("replica-1"))
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx))
	u := startUI(t, srv.Addr())
	tb := u.open(t, "/jobs")
	owners := `[...document.querySelectorAll("#recipe tr[data-item]")].map((r) => r.dataset.item + "=" + r.dataset.owner).join(" ")`
	tb.waitFor("every item owned", owners+` === "job-1=replica-1 job-2=replica-1 job-7=replica-1"`)
	require.Contains(t, eval[string](tb, `document.getElementById("recipe").textContent`), "replica-1 (3 items)")
	tb.screenshot("partition")
	closing, cancel := context.WithTimeout(context.Background(), zkrtest.Wait)
	defer cancel()
	require.NoError(t, p.Close(closing))
}

// The first page of zkr ui / is the overview: a held lock, a latch election and a
// group under different paths, each with its holder, leader or size; a second
// holder after a release and a new leader show without a reload; each row links
// to its recipe's page, and that page back to the overview.
func TestOverviewShowsEveryRecipe(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	client := func() *framework.Client { return zkrtest.Client(t, []string{srv.Addr()}) }

	a, err := mutex.New(client(), "/locks/nightly-report", mutex.WithID("replica-a"))
	require.NoError(t, err)
	require.NoError(t, a.Acquire(ctx))
	b, err := mutex.New(client(), "/locks/nightly-report", mutex.WithID("replica-b"))
	require.NoError(t, err)
	acquired := make(chan error, 1)
	go func() { acquired <- b.Acquire(ctx) }()
	latch := func(id string) *election.Latch {
		l, err := election.NewLatch(client(), "/services/scheduler", election.WithID(id))
		require.NoError(t, err)
		require.NoError(t, l.Start(ctx))
		return l
	}
	first := latch("sched-1")
	require.NoError(t, first.Await(ctx))
	second := latch("sched-2")
	for _, id := range []string{"worker-1", "worker-2", "worker-3"} {
		m, err := group.New(client(), "/workers", id, nil)
		require.NoError(t, err)
		require.NoError(t, m.Start(ctx))
		t.Cleanup(func() {
			closing, cancel := context.WithTimeout(context.Background(), zkrtest.Wait)
			defer cancel()
			_ = m.Close(closing)
		})
	}

	u := startUI(t, srv.Addr(), "/")
	tb := u.open(t, "")
	const rows = `[...document.querySelectorAll("#recipes tr[data-path]")].map((r) => r.dataset.path + " " + r.dataset.recipe + " " +
		(r.dataset.holders !== undefined ? r.dataset.holders + " waiting " + r.dataset.waiting : r.dataset.members)).join("; ")`
	tb.waitFor("the three recipes", rows+` === "/locks/nightly-report mutex replica-a waiting 1; /services/scheduler latch sched-1 waiting 1; /workers group 3"`)
	require.Contains(t, eval[string](tb, `document.querySelector('#recipes tr[data-path="/locks/nightly-report"]').textContent`), "held by replica-a")
	tb.screenshot("overview")
	eval[bool](tb, `window.__sameDocument = true`) // a reload would forget it

	require.NoError(t, a.Release(ctx))
	require.NoError(t, <-acquired)
	tb.waitFor("replica-b holding", rows+` === "/locks/nightly-report mutex replica-b waiting 0; /services/scheduler latch sched-1 waiting 1; /workers group 3"`)
	require.NoError(t, first.Close(ctx))
	require.NoError(t, second.Await(ctx))
	tb.waitFor("sched-2 leading", rows+` === "/locks/nightly-report mutex replica-b waiting 0; /services/scheduler latch sched-2 waiting 0; /workers group 3"`)
	require.True(t, eval[bool](tb, `window.__sameDocument === true`), "the page was reloaded")

	tb.do(chromedpClick(`#recipes tr[data-path="/locks/nightly-report"] a`))
	tb.waitFor("the lock's page", `window.zkrUI.path === "/locks/nightly-report" && `+holders+` === "replica-b:holder"`)
	tb.do(chromedpClick(`#to-overview`))
	tb.waitFor("the overview again", `window.zkrUI.path === null && document.querySelector("#recipes") !== null`)
	require.Empty(t, eval[[]string](tb, "window.__violations"))
	require.NoError(t, b.Release(ctx))
	require.NoError(t, second.Close(ctx))
}

// The overview lists 100 recipes a page; the next page has the rest.
func TestOverviewPages(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	ops := []framework.Op{framework.CreateOp("/groups", nil)}
	for i := range 101 {
		dir := fmt.Sprintf("/groups/g%03d", i)
		ops = append(ops, framework.CreateOp(dir, nil), framework.CreateOp(dir+"/member", nil, framework.Ephemeral()))
	}
	_, err := c.Multi(ctx, ops...)
	require.NoError(t, err)
	u := startUI(t, srv.Addr(), "/")
	tb := u.open(t, "")
	tb.waitFor("100 recipes listed", `document.querySelectorAll("#recipes tr[data-path]").length === 100`)
	require.Contains(t, eval[string](tb, `document.getElementById("overview").textContent`), "101 recipes found")
	tb.screenshot("overview-paged")
	tb.do(chromedpClick(`#overview button[data-go=next]`))
	tb.waitFor("the second page", `[...document.querySelectorAll("#recipes tr[data-path]")].map((r) => r.dataset.path).join() === "/groups/g100"`)
	tb.do(chromedpClick(`#overview button[data-go=previous]`))
	tb.waitFor("the first page again", `document.querySelectorAll("#recipes tr[data-path]").length === 100`)
}

// A partition's items and members come a page at a time, each with its pager; the
// counts and each member's share are of them all.
func TestPagePagesAPartition(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := zkrtest.Context(t)
	c := zkrtest.Client(t, []string{srv.Addr()})
	ops := []framework.Op{framework.CreateOp("/jobs", nil), framework.CreateOp("/jobs/items", nil), framework.CreateOp("/jobs/members", nil),
		framework.CreateOp("/jobs/members/m1", nil, framework.Ephemeral())}
	for i := range 150 {
		ops = append(ops, framework.CreateOp(fmt.Sprintf("/jobs/items/job-%03d", i), nil))
	}
	_, err := c.Multi(ctx, ops...)
	require.NoError(t, err)
	owner, err := mutex.New(zkrtest.Client(t, []string{srv.Addr()}), "/jobs/items/job-120", mutex.WithID("m1"))
	require.NoError(t, err)
	require.NoError(t, owner.Acquire(ctx))

	u := startUI(t, srv.Addr())
	tb := u.open(t, "/jobs")
	const items = `[...document.querySelectorAll("#recipe tr[data-item]")]`
	tb.waitFor("the first 100 items", items+`.length === 100 && `+items+`[0].dataset.item === "job-000"`)
	text := eval[string](tb, `document.getElementById("recipe").textContent`)
	require.Contains(t, text, "1 members, 150 items, 149 without an owner")
	require.Contains(t, text, "m1 (1 items)")
	require.Contains(t, text, "1–100 of 150")
	tb.do(chromedpClick(`#recipe button[data-list=items][data-go=next]`))
	tb.waitFor("the other 50", items+`.length === 50 && `+items+`[20].dataset.owner === "m1"`)
	tb.screenshot("partition-paged")
	release, cancel := context.WithTimeout(context.Background(), zkrtest.Wait)
	defer cancel()
	require.NoError(t, owner.Release(release))
}

// The printed URL opens the page and its token goes from the address bar into a
// cookie: a reload still shows the page. The same address without the token, or
// with a wrong one, shows zkr ui's refusal, not the page.
func TestPageKeepsTheTokenOutOfTheURL(t *testing.T) {
	srv := zktest.NewServer(t)
	u := startUI(t, srv.Addr())
	require.Contains(t, u.url, "/?token=")
	tb := u.open(t, "/")
	require.NotContains(t, eval[string](tb, `location.href`), "token")
	require.Equal(t, "", eval[string](tb, `document.cookie`), "the cookie is HttpOnly")
	tb.do(chromedp.Reload())
	tb.waitFor("the page again, by its cookie", `document.getElementById("conn").dataset.connection === "connected" && window.zkrUI.renders > 0`)

	base, _, _ := strings.Cut(u.url, "?")
	other := newTab(t) // the same browser: the cookie goes along, a wrong token wins over it
	other.do(chromedp.Navigate(base + "?token=WRONG"))
	other.waitFor("the refusal", `document.body.textContent.includes("needs the token")`)
	require.Zero(t, eval[int](other, `document.querySelectorAll("#conn").length`))
}
