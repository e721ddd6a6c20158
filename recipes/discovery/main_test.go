package discovery

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
)

func newDiscovery(t *testing.T, c *framework.Client) *Discovery {
	t.Helper()
	d, err := New(c, "/services")
	require.NoError(t, err)
	return d
}

// register registers in, unregistered at the end of the test.
func register(t *testing.T, d *Discovery, in Instance) *Registration {
	t.Helper()
	r, err := d.Register(testCtx(t), in)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

// heard records a provider's events, and checks at each one that the provider
// never holds two instances with the same id.
type heard struct {
	mu     sync.Mutex
	events []Event
	twice  []string
	more   chan struct{}
}

// follow starts a provider of the service with a recorder listening from the start.
func follow(t *testing.T, d *Discovery, name string, opts ...ProviderOption) (*Provider, *heard) {
	t.Helper()
	p, err := d.NewProvider(name, opts...)
	require.NoError(t, err)
	h := &heard{more: make(chan struct{}, 1)}
	p.Listen(func(e Event) {
		ids := map[string]bool{}
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, in := range p.Instances() {
			if ids[in.ID] {
				h.twice = append(h.twice, in.ID)
			}
			ids[in.ID] = true
		}
		h.events = append(h.events, e)
		select {
		case h.more <- struct{}{}:
		default:
		}
	})
	require.NoError(t, p.Start(testCtx(t)))
	t.Cleanup(func() {
		_ = p.Close(context.Background())
		h.mu.Lock()
		defer h.mu.Unlock()
		require.Empty(t, h.twice, "an id was known twice at once")
	})
	return p, h
}

func (h *heard) get() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// waitFor waits for an event of type typ at or after index from, and returns the
// index after it.
func (h *heard) waitFor(t *testing.T, from int, typ EventType) int {
	t.Helper()
	deadline := time.After(wait)
	for {
		for i, e := range h.get()[from:] {
			if e.Type == typ {
				return from + i + 1
			}
		}
		select {
		case <-h.more:
		case <-deadline:
			t.Fatalf("no %v event after %d: %v", typ, from, brief(h.get()))
		}
	}
}

// brief is the events as "Added id" (what changed, and to which instance).
func brief(events []Event) []string {
	out := []string{}
	for _, e := range events {
		switch e.Type {
		case Added:
			out = append(out, fmt.Sprintf("Added %s", e.New.ID))
		case Updated:
			out = append(out, fmt.Sprintf("Updated %s", e.New.ID))
		case Removed:
			out = append(out, fmt.Sprintf("Removed %s", e.Old.ID))
		default:
			out = append(out, e.Type.String())
		}
	}
	return out
}

// ids is the ids of the instances, in order.
func ids(ins []Instance) []string {
	out := []string{}
	for _, in := range ins {
		out = append(out, in.ID)
	}
	return out
}

// sees waits until the provider knows exactly the ids given.
func sees(t *testing.T, p *Provider, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Equal(ids(p.Instances()), want) }, wait, 10*time.Millisecond,
		"the provider knows %v, not %v", ids(p.Instances()), want)
}
