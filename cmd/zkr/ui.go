package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
)

var uiCmd = &command{
	name:     "ui",
	synopsis: "ui [PATH] [--listen ADDR] [--hold-warn D]",
	summary:  "serve a live, read-only web page of the locks, elections, groups, partitions and nodes under PATH",
	help: `Serves a web page of everything under PATH (default /), and a JSON API of the
same (docs/ui.md has its schema). The first page is an overview of every recipe
under PATH: a lock's holder, how long held and how many wait; an election's
leader; a group's size; a partition's members and items without an owner; each
a link to its page (at most 100 recipes: the page says when there are more).
Each node is shown by its layout, as zkr inspect reads it: a lock, read/write
lock, semaphore or election with its holders and waiters in queue order (through
recipes/participants, the rules the recipes grant by), a partition's items and
owners, a group's members, a count or counter; and every node's data, stat and
children, a page at a time.

zkr ui loads PATH's subtree into one cache (recipes/cache) and follows it with
the cache's watches; pages read that copy and hear of its changes as
Server-Sent Events, so open pages cost ZooKeeper nothing. While the connection to
ZooKeeper is suspended or the session lost, the page says so rather than showing
an old picture as current.

The server changes nothing in ZooKeeper: it answers GET only. It listens on
loopback unless --listen names another address, and then says so on stderr: the
page shows every node's data under PATH to whoever reaches it with the URL. It
answers only requests for the host names it listens on (loopback names, --listen's
host; with an address of every interface, also IP addresses and this machine's
name), which stops DNS rebinding, and only those that carry the token of this
run: it prints its URL, token included, on stdout once the copy is loaded, and
runs until SIGINT, SIGTERM or SIGHUP. The page keeps the token in a cookie.`,
	example: "  zkr ui /locks\n  zkr --servers zk1:2181 ui / --listen 0.0.0.0:8080",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		listen := fs.String("listen", "127.0.0.1:8080", "serve on this `host:port`; a host other than loopback is announced on stderr")
		holdWarn := fs.Duration("hold-warn", 10*time.Minute, "highlight a hold older than this `duration`")
		return func(e *env, pos, argv []string, dash bool) int {
			p := "/"
			switch {
			case dash:
				return e.fail(usageError("ui runs no command"))
			case len(pos) > 1:
				return e.fail(usageError("want at most one PATH"))
			case len(pos) == 1:
				p = pos[0]
			}
			if err := framework.ValidatePath(p); err != nil {
				return e.fail(usageError("invalid PATH %s", strings.TrimPrefix(err.Error(), framework.ErrInvalidPath.Error()+" ")))
			}
			if *holdWarn <= 0 {
				return e.fail(usageError("--hold-warn must be positive"))
			}
			return serveUI(e, p, *listen, *holdWarn)
		}
	},
}

// serveUI listens, loads p's subtree into a cache, and serves the page until a
// signal.
func serveUI(e *env, p, listen string, holdWarn time.Duration) int {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return e.fail(usageError("--listen wants host:port: %v", err))
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return e.fail(zkError("cannot listen on %s: %v", listen, err))
	}
	defer ln.Close()
	if !isLoopback(host) {
		e.notice("listening on %s, not loopback: whoever reaches it can read every node's data under %s", ln.Addr(), p)
	}
	s, code := e.start()
	if s == nil {
		return code
	}
	defer s.close()
	ctx, stop := s.interruptible(context.Background())
	defer stop()
	ca, err := cache.New(s.client, p)
	if err != nil {
		return s.fail(usageError("%v", err))
	}
	defer ca.Close(context.Background()) // the cache only reads: its reads end with it
	srv := newUIServer(ca, holdWarn)
	ca.Listen(srv.hear)
	if err := ca.Start(ctx); err != nil {
		if ctx.Err() != nil { // a signal before the copy was loaded
			return exitOK
		}
		return s.fail(zkError("loading %s: %v", p, err))
	}

	hostname, _ := os.Hostname() // none: only loopback names and addresses are answered
	token := newUIToken()
	guard := newUIGuard(srv, token, host, ln.Addr().(*net.TCPAddr), hostname)
	hs := &http.Server{Handler: guard, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(e.stdout, "http://%s/?%s=%s\n", ln.Addr(), uiTokenParam, token)
	select {
	case <-ctx.Done():
	case err := <-served:
		return s.fail(zkError("serving: %v", err))
	}
	srv.stop()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		e.log.Debug("zkr ui: shutdown", "err", err)
	}
	return exitOK
}

// isLoopback tells whether host names only this machine: an empty host or an
// unspecified address (0.0.0.0, ::) listens on every interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
