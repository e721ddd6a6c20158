package barrier

import (
	"context"
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
	children  = zkrtest.Children
)

// eventually waits for cond, polled.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, wait, 10*time.Millisecond, what)
}

// notYet fails if the call has returned.
func notYet(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) too early", what, err)
	default:
	}
}

func newDouble(t *testing.T, c *framework.Client, path string, members int) *Double {
	t.Helper()
	d, err := NewDouble(c, path, members)
	require.NoError(t, err)
	return d
}

// run calls fn on its own goroutine and hands back its result.
func run(ctx context.Context, fn func(context.Context) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	return done
}
