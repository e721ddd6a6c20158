package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Register, read back, update, list, unregister; and a provider hears each step as
// the instance it concerns.
func TestRegisterQueryUpdateClose(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	d := newDiscovery(t, c)
	ctx := testCtx(t)
	p, h := follow(t, d, "orders")

	in := Instance{Name: "orders", ID: "go-1", Address: "10.0.0.1", Port: 8080,
		Payload: json.RawMessage(`{"@class":"java.util.HashMap","zone":"eu-1"}`), URISpec: "{scheme}://{address}:{port}"}
	r, err := d.Register(ctx, in)
	require.NoError(t, err)
	require.False(t, r.Instance().Registered.IsZero(), "Register stamps the time")
	in.Registered = r.Instance().Registered

	got, err := d.Instance(ctx, "orders", "go-1")
	require.NoError(t, err)
	require.Equal(t, in, got)
	names, err := d.Names(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"orders"}, names)
	all, err := d.Instances(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, []Instance{in}, all)
	_, stat, err := c.Get(ctx, "/services/orders/go-1")
	require.NoError(t, err)
	require.Equal(t, c.SessionID(), stat.EphemeralOwner, "a Dynamic instance is ephemeral")

	sees(t, p, "go-1")
	picked, err := p.Pick()
	require.NoError(t, err)
	require.Equal(t, in, picked)

	in.Disabled = true
	require.NoError(t, r.Update(ctx, in))
	got, err = d.Instance(ctx, "orders", "go-1")
	require.NoError(t, err)
	require.True(t, got.Disabled)
	n := h.waitFor(t, 0, Updated)
	require.True(t, h.get()[n-1].New.Disabled)
	require.False(t, h.get()[n-1].Old.Disabled)
	_, err = p.Pick()
	require.ErrorIs(t, err, ErrNoInstance, "a disabled instance is not picked")
	require.Len(t, p.Instances(), 1, "but it is known")

	require.NoError(t, r.Close(context.Background()))
	require.NoError(t, r.Close(context.Background()))
	_, err = d.Instance(ctx, "orders", "go-1")
	require.ErrorIs(t, err, ErrNotFound)
	h.waitFor(t, n, Removed)
	require.Equal(t, []string{"Added go-1", "Updated go-1", "Removed go-1"}, brief(h.get()))
	require.ErrorIs(t, r.Update(ctx, in), ErrClosed)

	all, err = d.Instances(ctx, "none")
	require.NoError(t, err)
	require.Empty(t, all)
}

// Static and Permanent instances are persistent nodes; DynamicSequential ones get
// a sequence number, and are found by listing.
func TestServiceTypes(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	d := newDiscovery(t, c)
	ctx := testCtx(t)
	for _, typ := range []ServiceType{Static, Permanent} {
		r := register(t, d, Instance{Name: "t", ID: typ.String(), Type: typ})
		_, stat, err := c.Get(ctx, r.Path())
		require.NoError(t, err)
		require.Zero(t, stat.EphemeralOwner, typ)
	}
	r := register(t, d, Instance{Name: "t", ID: "seq", Type: DynamicSequential})
	require.Regexp(t, `^/services/t/_c_[0-9a-f-]{36}-seq\d{10}$`, r.Path())
	all, err := d.Instances(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, []string{"PERMANENT", "STATIC", "seq"}, ids(all))
}

// An id registered by another live session is refused, and its node left alone.
func TestIDTaken(t *testing.T) {
	srv := zkrtest.Server(t)
	a := newDiscovery(t, newClient(t, []string{srv.Addr()}))
	b := newDiscovery(t, newClient(t, []string{srv.Addr()}))
	ctx := testCtx(t)
	register(t, a, Instance{Name: "s", ID: "one", Address: "a"})
	_, err := b.Register(ctx, Instance{Name: "s", ID: "one", Address: "b"})
	require.ErrorIs(t, err, ErrIDTaken)
	got, err := b.Instance(ctx, "s", "one")
	require.NoError(t, err)
	require.Equal(t, "a", got.Address)
}

// A reconnect within the session sends nothing that changes the instance: no
// delete and re-create (Curator's does), so a provider hears no Removed.
func TestReconnectChangesNothing(t *testing.T) {
	srv := zkrtest.Server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := newClient(t, []string{proxy.Addr()}, framework.WithSessionTimeout(20*time.Second))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	p, h := follow(t, newDiscovery(t, other), "s")
	in := Instance{Name: "s", ID: "one", Address: "v1"}
	r := register(t, newDiscovery(t, c), in)
	sees(t, p, "one")
	_, before, err := other.Get(ctx, "/services/s/one")
	require.NoError(t, err)
	session := c.SessionID()

	reconnected, stop := zkrtest.Hears(c, framework.Reconnected)
	defer stop()
	proxy.Cut()
	proxy.Restore()
	select {
	case <-reconnected:
	case <-time.After(wait):
		t.Fatal("no reconnect")
	}
	require.Equal(t, session, c.SessionID())
	in.Address = "v2"
	require.NoError(t, r.Update(ctx, in)) // after whatever the reconnect made the keeper do
	h.waitFor(t, 0, Updated)
	_, after, err := other.Get(ctx, "/services/s/one")
	require.NoError(t, err)
	require.Equal(t, before.Czxid, after.Czxid, "the node was not made again")
	require.Equal(t, before.Version+1, after.Version, "one write: the Update")
	require.Equal(t, []string{"Added one", "Updated one"}, brief(h.get()))
}

// A node whose data is not an instance is reported once (an Error event), left out
// of the provider and skipped by queries; the others are read as usual.
func TestBadNode(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	var logged zkrtest.SyncBuffer
	d, err := New(c, "/services", WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	require.NoError(t, err)
	ctx := testCtx(t)
	register(t, d, Instance{Name: "s", ID: "good"})
	_, err = c.Create(ctx, "/services/s/bad", []byte("not json"), framework.Ephemeral())
	require.NoError(t, err)

	p, h := follow(t, d, "s")
	sees(t, p, "good")
	n := h.waitFor(t, 0, Error)
	e := h.get()[n-1]
	require.ErrorIs(t, e.Err, ErrBadInstance)
	require.Equal(t, "/services/s/bad", e.Path)

	all, err := d.Instances(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, []string{"good"}, ids(all))
	_, err = d.Instance(ctx, "s", "bad")
	require.ErrorIs(t, err, ErrBadInstance)

	// Made good, it joins; made bad again, it leaves with one more Error.
	good, _ := Instance{Name: "s", ID: "bad"}.marshal()
	_, err = c.Set(ctx, "/services/s/bad", good, -1)
	require.NoError(t, err)
	sees(t, p, "bad", "good")
	_, err = c.Set(ctx, "/services/s/bad", []byte("{"), -1)
	require.NoError(t, err)
	sees(t, p, "good")
	h.waitFor(t, n, Error)
	events := brief(h.get())
	require.ElementsMatch(t, []string{"Added good", "Error"}, events[:2], "the first load, in any order")
	require.Equal(t, []string{"Added bad", "Removed bad", "Error"}, events[2:])
	// Logged once per bad version by the provider, once by the query that skipped it.
	require.Equal(t, 2, strings.Count(logged.String(), "leaving out a node that is not an instance"), logged.String())
	require.Equal(t, 1, strings.Count(logged.String(), "skipping a node that is not an instance"), logged.String())
}

// A Register whose context ends first fails with its error and leaves no node.
func TestRegisterCancelled(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	d := newDiscovery(t, c)
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	r, err := d.Register(ctx, Instance{Name: "s", ID: "i"})
	require.Nil(t, r)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, zkrtest.Children(t, c, "/services/s"))
}

// Pick skips what NoteError marked down, and the filter's refusals.
func TestPickSkips(t *testing.T) {
	srv := zkrtest.Server(t)
	d := newDiscovery(t, newClient(t, []string{srv.Addr()}))
	for _, id := range []string{"a", "b", "c"} {
		register(t, d, Instance{Name: "s", ID: id})
	}
	p, _ := follow(t, d, "s", WithFilter(func(in Instance) bool { return in.ID != "c" }), DownAfter(1, time.Hour))
	sees(t, p, "a", "b", "c")
	seen := map[string]int{}
	for range 10 {
		in, err := p.Pick()
		require.NoError(t, err)
		seen[in.ID]++
	}
	require.Equal(t, map[string]int{"a": 5, "b": 5}, seen)
	p.NoteError(Instance{Name: "s", ID: "a"})
	for range 3 {
		in, err := p.Pick()
		require.NoError(t, err)
		require.Equal(t, "b", in.ID)
	}
	p.NoteError(Instance{Name: "s", ID: "b"})
	_, err := p.Pick()
	require.ErrorIs(t, err, ErrNoInstance)
	require.NoError(t, p.Close(context.Background()))
	_, err = p.Pick()
	require.ErrorIs(t, err, ErrClosed)
}

// Bad input is refused at the call, naming the problem, and writes nothing.
func TestBadInput(t *testing.T) {
	srv := zkrtest.Server(t)
	c := newClient(t, []string{srv.Addr()})
	zkrtest.CheckConstructor(t, ErrInvalid, c, func(c *framework.Client, p string) error {
		d, err := New(c, p)
		require.Nil(t, d)
		return err
	})
	d := newDiscovery(t, c)
	ctx := testCtx(t)
	for what, in := range map[string]Instance{
		"name": {ID: "i"}, "id": {Name: "s", ID: "a/b"}, "port": {Name: "s", ID: "i", Port: -2},
		"URI spec": {Name: "s", ID: "i", URISpec: "{a"},
	} {
		r, err := d.Register(ctx, in)
		require.Nil(t, r)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, what)
	}
	require.Empty(t, zkrtest.Children(t, c, "/services"), "nothing written")

	r := register(t, d, Instance{Name: "s", ID: "i"})
	err := r.Update(ctx, Instance{Name: "s", ID: "j"})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "Update of s/j")
	require.ErrorIs(t, r.Update(ctx, Instance{Name: "s", ID: "i", Type: Static}), ErrInvalid)
	require.ErrorIs(t, r.Update(ctx, Instance{Name: "s", ID: "i", SSLPort: -1}), ErrInvalid)

	for _, name := range []string{"", "a/b", ".."} {
		_, err := d.NewProvider(name)
		require.ErrorIs(t, err, ErrInvalid, name)
		_, err = d.Instances(ctx, name)
		require.ErrorIs(t, err, ErrInvalid, name)
		_, err = d.Instance(ctx, name, "i")
		require.ErrorIs(t, err, ErrInvalid, name)
		_, err = d.Instance(ctx, "s", name)
		require.ErrorIs(t, err, ErrInvalid, name)
	}
	for _, opt := range []ProviderOption{nil, WithFilter(nil), DownAfter(0, time.Second), DownAfter(1, 0)} {
		_, err := d.NewProvider("s", opt)
		require.ErrorIs(t, err, ErrInvalid)
	}
	_, err = New(c, "/services", nil)
	require.ErrorIs(t, err, ErrInvalid)
	p, err := d.NewProvider("s")
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx))
	require.ErrorIs(t, p.Start(ctx), ErrStarted)
	require.NoError(t, p.Close(context.Background()))
	require.ErrorIs(t, p.Start(ctx), ErrClosed)
	require.False(t, errors.Is(p.Close(context.Background()), ErrClosed), "Close is idempotent")
}

// Start returns with the instances registered before it already known: no wait
// after it (Curator's CURATOR-705, a ServiceCache empty just after start).
func TestStartLoadsFirst(t *testing.T) {
	srv := zkrtest.Server(t)
	d := newDiscovery(t, newClient(t, []string{srv.Addr()}))
	for _, id := range []string{"a", "b", "c"} {
		register(t, d, Instance{Name: "s", ID: id})
	}
	p, err := d.NewProvider("s")
	require.NoError(t, err)
	defer p.Close(context.Background())
	require.NoError(t, p.Start(testCtx(t)))
	require.Equal(t, []string{"a", "b", "c"}, ids(p.Instances()))
	in, err := p.Pick()
	require.NoError(t, err)
	require.Equal(t, "a", in.ID)
}
