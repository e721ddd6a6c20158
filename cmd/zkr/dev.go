package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/zktest"
)

var devCmd = &command{
	name:     "dev",
	synopsis: "dev [--port P]",
	summary:  "run a throwaway local ZooKeeper until Ctrl-C, for trying zkr out",
	help: `Starts a throwaway standalone ZooKeeper on a free loopback port (zktest's, in
a fresh data directory): the newest installed, which is the recommended 3.9.6 once
` + "`make deps`" + ` has unpacked it at a clone's root, else Debian's zookeeper package
(3.8.0 on bookworm). Its settings are ZooKeeper's defaults (tickTime 2 s: session
timeouts of 4 s to 40 s are granted, longer ones cut to 40 s). It prints its address
on stdout in a form a shell can source,
  ZK_SERVERS=127.0.0.1:PORT
  export ZK_SERVERS=127.0.0.1:PORT
says on stderr which version serves and the session timeouts it grants, and
serves until SIGINT, SIGTERM or SIGHUP, then stops it and removes its data.
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
	srv, err := zktest.StartServer(ctx, zktest.WithClientPort(port), zktest.WithTickTime(devTick))
	if err != nil {
		if sig := stop(); sig != 0 {
			return exitSignal + int(sig)
		}
		first, _, _ := strings.Cut(err.Error(), "\n") // zktest adds the server's log
		return e.fail(zkError("starting ZooKeeper: %s", first))
	}
	defer srv.Close()
	fmt.Fprintf(e.stdout, "ZK_SERVERS=%s\nexport ZK_SERVERS=%s\n", srv.Addr(), srv.Addr())
	e.notice("ZooKeeper %s serves at %s until Ctrl-C or SIGTERM; it grants session timeouts of %v to %v",
		srv.Version(), srv.Addr(), 2*devTick, 20*devTick)
	if !recommended(srv.Version()) {
		e.notice("ZooKeeper %s is not a recommended version (3.9.4 or later; 3.9.3 loses writes): `make deps` at a clone's root unpacks 3.9.6, which zkr dev then runs", srv.Version())
	}
	<-ctx.Done()
	stop()
	e.notice("stopping ZooKeeper")
	return exitOK
}

// devTick is ZooKeeper's default tickTime, so that the dev server grants what a
// default ensemble does: session timeouts of 2 to 20 ticks, 4 s to 40 s. (zktest's
// 200 ms, for tests that expire sessions quickly, capped every session at 4 s.)
const devTick = 2 * time.Second

// recommended says whether a ZooKeeper version is one the README recommends: 3.9.4
// or later (3.9.3 loses acknowledged writes, ZOOKEEPER-4925; 3.8.x's loss in our
// soaks is not fixed on that line).
func recommended(version string) bool {
	var major, minor, patch int
	if _, err := fmt.Sscanf(version, "%d.%d.%d", &major, &minor, &patch); err != nil {
		return false
	}
	switch {
	case major != 3:
		return major > 3
	case minor != 9:
		return minor > 9
	}
	return patch >= 4
}
