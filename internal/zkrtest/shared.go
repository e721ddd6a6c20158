package zkrtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// shared is the one server that a test binary's tests share (Server), started at
// the first call and stopped by the TestingM that SharedServer wraps.
var shared struct {
	mu  sync.Mutex
	srv *zktest.Server
	err error
}

// Server is a standalone server with zktest's defaults shared by the tests of one
// test binary, for a test that only needs a server to talk to: starting a JVM for
// each test was most of the time of many of them. It is the test's alone while it
// runs (the tests that share it must not call t.Parallel), and it is empty again
// after the test: when the test's clients have closed (its cleanups run before
// this one's, as they were registered after), every node the test left is deleted,
// and a node that cannot be deleted (an ACL that refuses it) fails the test.
//
// A test that stops or restarts the server, changes its options, reads its
// server-wide counters (mntr) or runs in parallel starts its own with
// zktest.NewServer. The package's TestMain must run its tests through
// SharedServer, which stops the server before goleak looks for goroutines.
func Server(t testing.TB) *zktest.Server {
	t.Helper()
	shared.mu.Lock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = zktest.StartServer(context.Background())
	}
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("the shared server: %v", err)
	}
	if err := wipe(srv.Addr()); err != nil {
		t.Fatalf("the shared server is not empty before the test: %v", err)
	}
	t.Cleanup(func() {
		if err := wipe(srv.Addr()); err != nil {
			t.Errorf("the shared server could not be emptied after the test (give the test a server of its own): %v", err)
		}
	})
	return srv
}

// wipe deletes every node on the server but /zookeeper's.
func wipe(addr string) error {
	c, err := framework.New([]string{addr})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		return err
	}
	names, _, err := c.Children(ctx, "/")
	if err != nil {
		return err
	}
	for _, name := range names {
		if name == "zookeeper" {
			continue
		}
		if err := c.DeleteAll(ctx, "/"+name); err != nil && !errors.Is(err, framework.ErrNoNode) {
			return fmt.Errorf("deleting /%s: %w", name, err)
		}
	}
	return nil
}

// SharedServer wraps a TestMain's m so that the server the tests shared (Server)
// stops once they have run: goleak.VerifyTestMain(zkrtest.SharedServer(m)).
func SharedServer(m *testing.M) interface{ Run() int } { return sharedRun{m} }

type sharedRun struct{ m *testing.M }

func (r sharedRun) Run() int {
	code := r.m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "zkrtest: closing the shared server:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.srv = nil
	}
	return code
}
