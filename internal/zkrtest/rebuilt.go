package zkrtest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// Rebuilt is an ensemble that can be rebuilt behind its address: a server with
// history (Old) behind a proxy (the address clients use), and a fresh one (Fresh)
// that Rebuild switches the proxy to, as when an ensemble is replaced by a new,
// empty one. Both are closed at the end of the test.
type Rebuilt struct {
	Old, Fresh *zktest.Server
	Proxy      *zktest.Proxy
}

// NewRebuilt starts the two servers, at once, and the proxy to Old.
func NewRebuilt(t testing.TB, opts ...zktest.Option) *Rebuilt {
	t.Helper()
	started := make(chan *zktest.Server)
	go func() {
		s, err := zktest.StartServer(Context(t), opts...)
		if err != nil {
			t.Error(err)
		} else {
			t.Cleanup(func() { _ = s.Close() })
		}
		started <- s
	}()
	old := zktest.NewServer(t, opts...)
	fresh := <-started
	require.NotNil(t, fresh)
	return &Rebuilt{Old: old, Fresh: fresh, Proxy: zktest.NewProxy(t, old.Addr())}
}

// Addr is the address the clients use.
func (r *Rebuilt) Addr() string { return r.Proxy.Addr() }

// Rebuild puts Fresh behind the address, and cuts the connections to Old.
func (r *Rebuilt) Rebuild() {
	r.Proxy.SetTarget(r.Fresh.Addr())
	r.Proxy.Cut()
	r.Proxy.Restore()
}
