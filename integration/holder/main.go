// Command holder is a participant in a process of its own, for the tests that pause
// one with SIGSTOP (integration/paused_test.go, the chaos run). It takes a hold when
// told, says when the hold's Lost closes, and when told to write, writes with its
// fencing token without looking at Lost first: that is the write a process had
// decided on when it was paused, the one only a fence can stop.
//
// Commands come on stdin, one a line; answers and events go to stdout, one a line:
//
//	acquire  → held TOKEN NODE        (or: error MESSAGE, after -acquire at the latest)
//	write    → write TOKEN
//	release  → released               (or: error MESSAGE)
//	           lost UNIXNANO          when Lost closes during a hold
//
// It exits when stdin ends, closing its session.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/integration/internal/holds"
)

func main() {
	servers := flag.String("servers", "", "ZooKeeper servers, comma-separated")
	recipe := flag.String("recipe", "mutex", "mutex, write (a write lock), lease (of a one-lease semaphore) or latch")
	path := flag.String("path", "/paused", "the recipe's path")
	session := flag.Duration("session", time.Second, "the session timeout")
	policy := flag.String("policy", "standard", "the error policy: standard or session")
	acquireFor := flag.Duration("acquire", time.Minute, "how long an acquire waits before it says error")
	flag.Parse()
	if err := run(*servers, *recipe, *path, *session, *policy, *acquireFor); err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		os.Exit(1)
	}
}

var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func say(format string, args ...any) {
	out.Lock()
	defer out.Unlock()
	fmt.Fprintf(out.w, format+"\n", args...)
	_ = out.w.Flush()
}

func run(servers, recipe, path string, session time.Duration, policy string, acquireFor time.Duration) error {
	opts := []framework.Option{framework.WithSessionTimeout(session), framework.WithLogger(slog.New(slog.DiscardHandler))}
	if policy == "session" {
		opts = append(opts, framework.WithErrorPolicy(framework.SessionErrorPolicy))
	}
	c, err := framework.New(strings.Split(servers, ","), opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	acquire, err := holds.New(c, recipe, path)
	if err != nil {
		return err
	}
	var h holds.Held
	var token int64
	var released chan struct{} // closed before our own Release, which closes Lost too
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch cmd := in.Text(); {
		case cmd == "acquire" && h == nil:
			ctx, cancel := context.WithTimeout(context.Background(), acquireFor)
			h, err = acquire(ctx)
			cancel()
			if err != nil {
				h = nil
				say("error %v", err)
				continue
			}
			released = make(chan struct{})
			go reportLost(h.Lost(), released)
			// The token of the grant, kept: a latch's FencingToken reads 0 once it
			// no longer leads, and a write decided on while holding carries the
			// grant's token whatever happened since.
			token = h.FencingToken()
			say("held %d %s", token, h.Node())
		case cmd == "write" && h != nil:
			say("write %d", token)
		case cmd == "release" && h != nil:
			close(released)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := h.Release(ctx)
			cancel()
			h = nil
			if err != nil {
				say("error %v", err)
				continue
			}
			say("released")
		default:
			say("error unexpected command %q", cmd)
		}
	}
	return in.Err()
}

func reportLost(lost <-chan struct{}, released <-chan struct{}) {
	select {
	case <-lost:
		at := time.Now()
		select {
		case <-released:
		default:
			say("lost %d", at.UnixNano())
		}
	case <-released:
	}
}
