package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// target is the one ZooKeeper server every contender runs on, and the driver's own
// session on it, which makes each trial's path beforehand and reads the server's
// counters.
type target struct {
	addr   string
	origin string         // how the server came to be, for the report
	server *zktest.Server // nil when ZK_SERVERS names the server
	pid    int            // the server's process, when it is our child; else 0
	root   string         // every path of this run is below it
	// The server counts each four-letter word as a packet received: words counts
	// ours, and perWord is what one adds to zk_packets_received (measured at start),
	// so that the request counts leave the driver's own polling out.
	words   atomic.Int64
	perWord int64
}

// startTarget starts a throwaway server, or uses the first of ZK_SERVERS, which must
// be on loopback: the benchmark floods its server with requests.
func startTarget(ctx context.Context) (*target, error) {
	t := &target{root: fmt.Sprintf("/zkrecipes-bench-%d", time.Now().Unix())}
	if env := strings.TrimSpace(os.Getenv("ZK_SERVERS")); env != "" {
		t.addr = strings.TrimSpace(strings.Split(env, ",")[0])
		if err := checkLoopback(ctx, t.addr); err != nil {
			return nil, err
		}
		t.origin = "ZK_SERVERS (first server: " + t.addr + ")"
	} else {
		// Sessions of 60 s, so that pings do not count in the request figures: the
		// default maximum of zktest's servers is 20 ticks of 200 ms.
		srv, err := zktest.StartServer(ctx, zktest.WithSessionTimeouts(4*time.Second, sessionTimeout))
		if err != nil {
			return nil, err
		}
		t.server, t.addr = srv, srv.Addr()
		t.origin = "a throwaway standalone server started by zktest (tickTime 200 ms, sessions 4–60 s, forceSync=no, 256 MiB heap, serial GC)"
	}
	if err := t.calibrate(ctx); err != nil {
		t.Close()
		return nil, fmt.Errorf("the server must answer mntr and wchs (4lw.commands.whitelist): %w", err)
	}
	if t.server != nil {
		t.pid = childProcess("QuorumPeerMain")
	}
	if err := t.mkdirs(ctx, t.root); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func checkLoopback(ctx context.Context, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("ZK_SERVERS: %q is not host:port: %w", addr, err)
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("ZK_SERVERS: %w", err)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return fmt.Errorf("ZK_SERVERS: %s is not a loopback address; the benchmark runs only against a server on this machine", addr)
		}
	}
	return nil
}

// Close removes what the run made (on a server of ZK_SERVERS) or stops the server.
func (t *target) Close() {
	if t.server != nil {
		_ = t.server.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = t.admin(ctx, func(conn *zk.Conn) error { return removeAll(conn, t.root) })
}

// admin runs fn in a session of the driver's own, closed before fn's caller goes on
// to measure anything: an idle session would ping into the request counts.
func (t *target) admin(ctx context.Context, fn func(*zk.Conn) error) error {
	conn, err := dialZK(ctx, t.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(conn)
}

// serverCPU is the CPU time the server has used, when it is our child process.
func (t *target) serverCPU() (time.Duration, bool) {
	if t.pid == 0 {
		return 0, false
	}
	return procCPU(strconv.Itoa(t.pid)), true
}

func (t *target) fourLetter(ctx context.Context, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t.words.Add(1)
	return zktest.FourLetter(ctx, t.addr, word)
}

// calibrate measures what one four-letter word adds to the packet count: the
// smallest difference between consecutive readings of an otherwise idle server.
func (t *target) calibrate(ctx context.Context) error {
	prev, err := t.packets(ctx)
	if err != nil {
		return err
	}
	t.perWord = -1
	for range 5 {
		p, err := t.packets(ctx)
		if err != nil {
			return err
		}
		if d := p - prev; t.perWord < 0 || d < t.perWord {
			t.perWord = d
		}
		prev = p
	}
	return nil
}

// stat reads one number of mntr.
func (t *target) stat(ctx context.Context, key string) (int64, error) {
	out, err := t.fourLetter(ctx, "mntr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("mntr has no %s", key)
}

// packets is the count of requests the server has received (pings included).
func (t *target) packets(ctx context.Context) (int64, error) {
	return t.stat(ctx, "zk_packets_received")
}

// watches reads wchs: how many watches the server holds, on how many paths.
func (t *target) watches(ctx context.Context) (watches, paths int, err error) {
	out, err := t.fourLetter(ctx, "wchs")
	if err != nil {
		return 0, 0, err
	}
	// "3 connections watching 3 paths\nTotal watches:3"
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Total watches:"); ok {
			watches, err = strconv.Atoi(strings.TrimSpace(v))
		}
		if f := strings.Fields(line); len(f) == 5 && f[1] == "connections" && f[2] == "watching" {
			paths, _ = strconv.Atoi(f[3])
		}
	}
	if err == nil && !strings.Contains(out, "Total watches:") {
		err = fmt.Errorf("unexpected wchs answer %q", out)
	}
	return watches, paths, err
}

// watchesUnder reads wchp: how many watches (a session watching a path) the server
// holds on paths below dir.
func (t *target) watchesUnder(ctx context.Context, dir string) (int, error) {
	out, err := t.fourLetter(ctx, "wchp")
	if err != nil {
		return 0, err
	}
	// "/path\n\t0x10000a1b2c30000\n\t0x...\n/other/path\n..."
	n, under := 0, false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			under = strings.HasPrefix(line, dir+"/")
		case under && strings.TrimSpace(line) != "":
			n++
		}
	}
	return n, nil
}

// version is the server's, as srvr says it.
func (t *target) version(ctx context.Context) string {
	out, err := t.fourLetter(ctx, "srvr")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Zookeeper version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// mkdirs makes each path and its missing parents, as persistent nodes.
func (t *target) mkdirs(ctx context.Context, paths ...string) error {
	return t.admin(ctx, func(conn *zk.Conn) error {
		for _, p := range paths {
			cur := ""
			for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
				cur += "/" + part
				_, err := conn.Create(cur, nil, 0, openACL)
				if err != nil && !errors.Is(err, zk.ErrNodeExists) {
					return fmt.Errorf("creating %s: %w", cur, err)
				}
			}
		}
		return nil
	})
}

func removeAll(conn *zk.Conn, p string) error {
	children, _, err := conn.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := removeAll(conn, path.Join(p, c)); err != nil {
			return err
		}
	}
	err = conn.Delete(p, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
