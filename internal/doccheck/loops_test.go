package doccheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// loops are the guides' functions that loop until their ctx ends, each called by a
// driver (driverMain and the program's run) that ends it as a program's shutdown
// does, and exits 0 if the function returned the error the guide promises.
var loops = []program{
	// The poller's ctx ends while it leads, as on a SIGTERM: issue 44's spin.
	{file: "docs/election.md", heading: "Latch", name: "election-poll", driver: `
func run(ctx context.Context, cancel context.CancelFunc, client *framework.Client) (err, want error) {
	err = block.Poll(ctx, client, func(context.Context, int64) error {
		fmt.Println("polled")
		cancel()
		return nil
	})
	return err, context.Canceled
}
`},
	// The follower's ctx ends, or its client closes under it; either ends the loop.
	{file: "docs/client.md", heading: "Persistent watches", name: "client-follow", driver: `
func run(ctx context.Context, cancel context.CancelFunc, client *framework.Client) (err, want error) {
	returned := make(chan error, 1)
	go func() { returned <- block.Follow(ctx, client) }()
	if _, err := client.Create(ctx, "/config/a", nil, framework.CreatingParents()); err != nil && !errors.Is(err, framework.ErrNodeExists) {
		return err, nil
	}
	want = context.Canceled
	if os.Args[1] == "close" {
		want = framework.ErrClosed
		client.Close()
	} else {
		cancel()
	}
	return <-returned, want
}
`},
}

// driverMain is the start of a driver's source, with %q for the block's import
// path; the program's driver adds run, which calls the block's function.
const driverMain = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"

	block %q
)

func main() {
	client, err := framework.New(strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err, want := run(ctx, cancel, client)
	fmt.Println("returned:", err)
	if want == nil || !errors.Is(err, want) {
		os.Exit(1)
	}
}
`

// runLoops runs each of loops' programs, built in dir, against the server at addr,
// and requires it to return: a program that writes more than outputCap is spinning,
// and is stopped.
func runLoops(t *testing.T, dir, addr string, c *framework.Client) {
	run := func(t *testing.T, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithCancel(zkrtest.Context(t))
		defer cancel()
		out := &capped{spinning: cancel}
		cmd := exec.CommandContext(ctx, filepath.Join(dir, name), args...)
		cmd.Env = append(os.Environ(), "ZK_SERVERS="+addr)
		cmd.Stdout, cmd.Stderr = out, out
		err := cmd.Run()
		require.False(t, out.over(), "%s %v spins: more than %d bytes of output, beginning:\n%.2000s", name, args, outputCap, out)
		require.NoError(t, err, "%s %v:\n%s", name, args, out)
		return out.String()
	}
	t.Run("election-poll", func(t *testing.T) {
		out := run(t, "election-poll")
		require.Regexp(t, `(?m)^polled$`, out)
		require.Regexp(t, `(?m)^returned: election: awaiting leadership of /scheduler/poller: context canceled$`, out)
		require.Empty(t, zkrtest.Children(t, c, "/scheduler/poller"), "the latch's Close left its node")
	})
	t.Run("client-follow", func(t *testing.T) {
		run(t, "client-follow", "cancel")
		run(t, "client-follow", "close")
	})
}

// outputCap is more than any of loops' programs writes when it works.
const outputCap = 64 << 10

// capped keeps a program's first outputCap bytes of output, and calls spinning once
// it has written more.
type capped struct {
	mu       sync.Mutex
	b        []byte
	n        int
	spinning func()
}

func (w *capped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += len(p)
	if room := outputCap - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	if w.n > outputCap {
		w.spinning()
	}
	return len(p), nil
}

func (w *capped) over() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n > outputCap
}

func (w *capped) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
