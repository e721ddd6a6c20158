package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/zkrecipes/zkrecipes/zktest"
)

var devCmd = &command{
	name:     "dev",
	synopsis: "dev [--port P]",
	summary:  "run a throwaway local ZooKeeper until Ctrl-C, for trying zkr out",
	help: `Starts a throwaway standalone ZooKeeper on a free loopback port (zktest's:
Debian's zookeeper package, a fresh data directory, sessions of 0.4 s to 4 s),
prints its address on stdout in a form a shell can source,
  ZK_SERVERS=127.0.0.1:PORT
  export ZK_SERVERS=127.0.0.1:PORT
and serves until SIGINT, SIGTERM or SIGHUP, then stops it and removes its data.
A --port in use is an error (69).`,
	example: "  zkr dev > /tmp/zk.env &\n  . /tmp/zk.env    # once the lines are there\n  zkr lock /demo -- sleep 30 &\n  zkr inspect /demo",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		port := fs.Int("port", 0, "loopback port to serve on (default: a free one)")
		return func(e *env, pos, argv []string, dash bool) int {
			if len(pos) > 0 || dash {
				return e.fail(usageError("dev takes no arguments"))
			}
			if *port < 0 || *port > 65535 {
				return e.fail(usageError("--port %d is not a port", *port))
			}
			return dev(e, *port)
		}
	},
}

func dev(e *env, port int) int {
	s := &session{env: e, sigs: make(chan os.Signal, 8)}
	signal.Notify(s.sigs, forwarded...)
	defer signal.Stop(s.sigs)
	ctx, stop := s.interruptible(context.Background())
	srv, err := zktest.StartServer(ctx, zktest.WithClientPort(port))
	if err != nil {
		if sig := stop(); sig != 0 {
			return exitSignal + int(sig)
		}
		first, _, _ := strings.Cut(err.Error(), "\n") // zktest adds the server's log
		return e.fail(zkError("starting ZooKeeper: %s", first))
	}
	defer srv.Close()
	fmt.Fprintf(e.stdout, "ZK_SERVERS=%s\nexport ZK_SERVERS=%s\n", srv.Addr(), srv.Addr())
	e.notice("ZooKeeper serves at %s until Ctrl-C or SIGTERM", srv.Addr())
	<-ctx.Done()
	stop()
	e.notice("stopping ZooKeeper")
	return exitOK
}
