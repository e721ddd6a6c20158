package zktest

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// connect opens a raw go-zookeeper session and waits until it has one.
func connect(t *testing.T, addrs []string, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	conn, events, err := zk.Connect(addrs, timeout, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	require.NoError(t, err)
	t.Cleanup(func() {
		conn.Close()
		for range events { // drained so that go-zookeeper's goroutines end before goleak looks
		}
	})
	waitState(t, events, zk.StateHasSession)
	return conn, events
}

// waitState reads session events until one has the wanted state.
func waitState(t *testing.T, events <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			require.True(t, ok, "event channel closed while waiting for %v", want)
			if ev.Type == zk.EventSession && ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event within 30s", want)
		}
	}
}
