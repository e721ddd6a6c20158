package framework

import (
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Plumbing.Go runs a recipe's work on the client's request goroutines, so that a
// lock's second request of a flight runs with a stack already grown, not on a new
// goroutine each time (a tenth of a contended acquisition's CPU was stack copying);
// once Close has begun, it still runs what it is given.
func TestPlumbingGoReusesRequestGoroutines(t *testing.T) {
	c, err := New([]string{"127.0.0.1:1"}, WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	p := c.ForRecipes()
	ran := make(chan string, 1)
	p.Go(func() { ran <- goroutineID() })
	first := <-ran
	require.Eventually(t, func() bool { return len(c.requests.idle) > 0 }, time.Minute, time.Millisecond,
		"the request goroutine waits for the next")
	p.Go(func() { ran <- goroutineID() })
	require.Equal(t, first, <-ran, "the second ran on the first's goroutine")

	require.NoError(t, c.Close())
	done := make(chan struct{})
	p.Go(func() { close(done) })
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("nothing ran after Close")
	}
}

// goroutineID is the calling goroutine's number, as its stack trace's first line
// says ("goroutine 42 [running]:").
func goroutineID() string {
	var b [64]byte
	return strings.Fields(string(b[:runtime.Stack(b[:], false)]))[1]
}
