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

// target is the ZooKeeper server, or the ensemble, every contender runs on, and the
// driver's own session on it, which makes each trial's path beforehand and reads the
// servers' counters. Counters of an ensemble are the sum over its members; the
// per-member figures are kept beside them.
type target struct {
	addr     string           // the connect string the contenders get: host:port[,host:port...]
	members  []string         // each server's client address, for its four-letter words
	origin   string           // how the servers came to be, for the report
	server   *zktest.Server   // a throwaway standalone server, or nil
	ensemble *zktest.Ensemble // a throwaway ensemble, or nil
	pids     []int            // the servers' processes, when they are our children
	root     string           // every path of this run is below it
	// Each server counts a four-letter word as a packet received: words counts ours
	// per member, and perWord is what one adds to zk_packets_received (measured at
	// start), so that the request counts leave the driver's own polling out.
	words   []atomic.Int64
	perWord int64
}

// startTarget starts a throwaway server (or, with members > 1, a throwaway ensemble
// of that many), or uses the first of ZK_SERVERS, which must be on loopback: the
// benchmark floods its server with requests.
// heapMB is each throwaway server's heap, 0 for zktest's default of 256 MiB.
func startTarget(ctx context.Context, members, heapMB int) (*target, error) {
	t := &target{root: fmt.Sprintf("/zkrecipes-bench-%d", time.Now().Unix())}
	// Sessions of 60 s, so that pings do not count in the request figures: the
	// default maximum of zktest's servers is 20 ticks of 200 ms.
	timeouts := []zktest.Option{zktest.WithSessionTimeouts(4*time.Second, sessionTimeout)}
	if heapMB == 0 {
		heapMB = 256
	}
	timeouts = append(timeouts, zktest.WithHeapMB(heapMB))
	env := strings.TrimSpace(os.Getenv("ZK_SERVERS"))
	switch {
	case members > 1 && env != "":
		return nil, errors.New("ZK_SERVERS and an ensemble of the driver's own do not go together")
	case members > 1:
		e, err := zktest.StartEnsemble(ctx, members, timeouts...)
		if err != nil {
			return nil, err
		}
		t.ensemble, t.members = e, e.Addrs()
		t.origin = fmt.Sprintf("a throwaway ensemble of %d servers started by zktest (tickTime 200 ms, sessions 4–60 s, "+
			"forceSync=no, %d MiB heap each, serial GC); every session is given all %d and picks one, as clients do", members, heapMB, members)
	case env != "":
		addr := strings.TrimSpace(strings.Split(env, ",")[0])
		if err := checkLoopback(ctx, addr); err != nil {
			return nil, err
		}
		t.members = []string{addr}
		t.origin = "ZK_SERVERS (first server: " + addr + ")"
	default:
		srv, err := zktest.StartServer(ctx, timeouts...)
		if err != nil {
			return nil, err
		}
		t.server, t.members = srv, []string{srv.Addr()}
		t.origin = fmt.Sprintf("a throwaway standalone server started by zktest (tickTime 200 ms, sessions 4–60 s, forceSync=no, %d MiB heap, serial GC)", heapMB)
	}
	t.addr = strings.Join(t.members, ",")
	t.words = make([]atomic.Int64, len(t.members))
	if err := t.calibrate(ctx); err != nil {
		t.Close()
		return nil, fmt.Errorf("the server must answer mntr and wchs (4lw.commands.whitelist): %w", err)
	}
	if t.server != nil || t.ensemble != nil {
		t.pids = childProcesses("QuorumPeerMain")
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

// Close removes what the run made (on a server of ZK_SERVERS) or stops the servers.
func (t *target) Close() {
	switch {
	case t.server != nil:
		_ = t.server.Close()
	case t.ensemble != nil:
		_ = t.ensemble.Close()
	default:
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = t.admin(ctx, func(conn *zk.Conn) error { return removeAll(conn, t.root) })
	}
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

// serverCPU is the CPU time the servers have used, when they are our children.
func (t *target) serverCPU() (time.Duration, bool) {
	if len(t.pids) == 0 {
		return 0, false
	}
	var sum time.Duration
	for _, pid := range t.pids {
		sum += procCPU(strconv.Itoa(pid))
	}
	return sum, true
}

func (t *target) fourLetter(ctx context.Context, member int, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t.words[member].Add(1)
	return zktest.FourLetter(ctx, t.members[member], word)
}

// wordsSent is how many four-letter words each member has had from us.
func (t *target) wordsSent() []int64 {
	ws := make([]int64, len(t.words))
	for i := range t.words {
		ws[i] = t.words[i].Load()
	}
	return ws
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
		if d := p[0] - prev[0]; t.perWord < 0 || d < t.perWord {
			t.perWord = d
		}
		prev = p
	}
	return nil
}

// stat reads one number of a member's mntr.
func (t *target) stat(ctx context.Context, member int, key string) (int64, error) {
	out, err := t.fourLetter(ctx, member, "mntr")
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

// packets is the count of requests each member has received (pings included).
func (t *target) packets(ctx context.Context) ([]int64, error) {
	ps := make([]int64, len(t.members))
	for i := range t.members {
		var err error
		if ps[i], err = t.stat(ctx, i, "zk_packets_received"); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// responseBytes is the bytes the servers have sent in responses so far (mntr's
// zk_response_bytes, summed over the members), which four-letter words leave alone.
func (t *target) responseBytes(ctx context.Context) (int64, error) {
	var n int64
	for i := range t.members {
		b, err := t.stat(ctx, i, "zk_response_bytes")
		if err != nil {
			return 0, err
		}
		n += b
	}
	return n, nil
}

// watches reads wchs: how many watches each member holds, and their sum.
func (t *target) watches(ctx context.Context) (sum int, each []int, err error) {
	each = make([]int, len(t.members))
	for i := range t.members {
		out, err := t.fourLetter(ctx, i, "wchs")
		if err != nil {
			return 0, nil, err
		}
		// "3 connections watching 3 paths\nTotal watches:3"
		found := false
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "Total watches:"); ok {
				if each[i], err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
					return 0, nil, err
				}
				found = true
			}
		}
		if !found {
			return 0, nil, fmt.Errorf("unexpected wchs answer %q", out)
		}
		sum += each[i]
	}
	return sum, each, nil
}

// watchesUnder reads wchp: how many watches (a session watching a path) the servers
// hold on dir and the paths below it.
func (t *target) watchesUnder(ctx context.Context, dir string) (int, error) {
	n := 0
	for i := range t.members {
		out, err := t.fourLetter(ctx, i, "wchp")
		if err != nil {
			return 0, err
		}
		// "/path\n\t0x10000a1b2c30000\n\t0x...\n/other/path\n..."
		under := false
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(line, "/"):
				under = line == dir || strings.HasPrefix(line, dir+"/")
			case under && strings.TrimSpace(line) != "":
				n++
			}
		}
	}
	return n, nil
}

// sessionRequests reads cons: the requests (pings included) each session's
// connection has sent so far, by session id, summed over the members. The
// driver's own four-letter words come on connections without a session.
func (t *target) sessionRequests(ctx context.Context) (map[int64]int64, error) {
	by := map[int64]int64{}
	for i := range t.members {
		out, err := t.fourLetter(ctx, i, "cons")
		if err != nil {
			return nil, err
		}
		// " /127.0.0.1:41234[1](queued=0,recved=12,sent=12,sid=0x100007c5c5d0000,lop=GETD,...)"
		for _, line := range strings.Split(out, "\n") {
			_, fields, ok := strings.Cut(line, "(")
			if !ok {
				continue
			}
			var sid, recved int64
			var hasSid, hasRecved bool
			for _, f := range strings.Split(strings.TrimSuffix(strings.TrimSpace(fields), ")"), ",") {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "sid":
					u, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
					if err != nil {
						return nil, fmt.Errorf("unexpected cons line %q: %w", line, err)
					}
					sid, hasSid = int64(u), true
				case "recved":
					if recved, err = strconv.ParseInt(v, 10, 64); err != nil {
						return nil, fmt.Errorf("unexpected cons line %q: %w", line, err)
					}
					hasRecved = true
				}
			}
			if hasSid && hasRecved {
				by[sid] += recved
			}
		}
	}
	return by, nil
}

// version is the server's, as srvr says it.
func (t *target) version(ctx context.Context) string {
	out, err := t.fourLetter(ctx, 0, "srvr")
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

// removeTree deletes p and everything below it, deepest first, in multi-requests
// of a few hundred: a cache's tree of 100,000 nodes would fill a throwaway server's
// heap if each trial left its own behind.
func removeTree(conn *zk.Conn, p string) error {
	all, level := []string{p}, []string{p}
	for len(level) > 0 {
		var next []string
		for _, parent := range level {
			children, _, err := conn.Children(parent)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			for _, c := range children {
				next = append(next, path.Join(parent, c))
			}
		}
		all, level = append(all, next...), next
	}
	for end := len(all); end > 0; end -= 500 {
		var ops []any
		for i := end - 1; i >= max(0, end-500); i-- { // children before their parents
			ops = append(ops, &zk.DeleteRequest{Path: all[i], Version: -1})
		}
		if _, err := conn.Multi(ops...); err != nil {
			return fmt.Errorf("removing %s: %w", p, err)
		}
	}
	return nil
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
