package framework

import (
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

func TestOnWatchEventHearsEveryNotificationInTheNamespaceUntilStopped(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	other := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)
	_, err := c.Create(ctx, "/n", nil)
	require.NoError(t, err)
	_, err = other.Create(ctx, "/outside", nil)
	require.NoError(t, err)

	var mu sync.Mutex
	var heard []zk.Event
	stop := c.OnWatchEvent(func(ev zk.Event) {
		mu.Lock()
		heard = append(heard, ev)
		mu.Unlock()
	})
	got := func() []zk.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]zk.Event(nil), heard...)
	}

	_, _, data, err := c.GetW(ctx, "/n")
	require.NoError(t, err)
	_, _, kids, err := c.ChildrenW(ctx, "/n")
	require.NoError(t, err)
	_, _, outside, err := c.Conn().GetW("/outside") // a watch outside the namespace
	require.NoError(t, err)
	_, err = other.Set(ctx, "/app/n", []byte("x"), -1)
	require.NoError(t, err)
	_, err = other.Create(ctx, "/app/n/kid", nil)
	require.NoError(t, err)
	_, err = other.Set(ctx, "/outside", []byte("x"), -1)
	require.NoError(t, err)
	// go-zookeeper calls the subscribers before it fills the watch's channel.
	for _, ch := range []<-chan zk.Event{data, kids, outside} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	evs := got()
	require.Len(t, evs, 2, "the two watches inside the namespace: %v", evs)
	require.Equal(t, zk.EventNodeDataChanged, evs[0].Type)
	require.Equal(t, "/n", evs[0].Path, "the path without the namespace")
	require.Equal(t, zk.EventNodeChildrenChanged, evs[1].Type)
	require.Equal(t, "/n", evs[1].Path)

	stop()
	_, _, data, err = c.GetW(ctx, "/n")
	require.NoError(t, err)
	_, err = other.Set(ctx, "/app/n", []byte("y"), -1)
	require.NoError(t, err)
	select {
	case <-data:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	require.Len(t, got(), 2, "nothing after stop")
	require.NotPanics(t, func() { c.OnWatchEvent(nil)() })
}
