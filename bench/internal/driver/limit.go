package driver

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"
)

// The limit: the ZooKeeper operations each recipe needs and nothing else, sent
// straight through go-zookeeper. A lock is: create an ephemeral-sequential node,
// list the children, and while the rule says we do not hold, watch the one node it
// names (GetW) and list again when it fires; once it holds, watch our own node
// (ExistsW), which lets a holder hear its node's deletion and reads its czxid, the
// fencing token; release is one delete. No protection,
// no container parents (the driver makes the lock's path beforehand), no session
// checks, no retries: what the recipes add on top of this is what the other
// contenders are measured against.
func newLimit(addr string) contender {
	return &goContender{
		name:  "limit",
		kinds: []kind{cycles, contended, rw, counting, handover, queue},
		addr:  addr,
		dial: func(ctx context.Context, addr string) (goSession, error) {
			conn, err := dialZK(ctx, addr)
			if err != nil {
				return nil, err
			}
			return &rawSession{conn: conn}, nil
		},
	}
}

type rawSession struct{ conn *zk.Conn }

func (s *rawSession) Close() { s.conn.Close() }

func (s *rawSession) Mutex(dir string) (locker, error) {
	return &rawLock{conn: s.conn, dir: dir, name: "lock-", rule: exclusive}, nil
}

func (s *rawSession) ReadLock(dir string) (locker, error) {
	return &rawLock{conn: s.conn, dir: dir, name: "read-", rule: reader}, nil
}

func (s *rawSession) WriteLock(dir string) (locker, error) {
	return &rawLock{conn: s.conn, dir: dir, name: "write-", rule: exclusive}, nil
}

func (s *rawSession) Semaphore(dir string, leases int) (locker, error) {
	return &rawSemaphore{
		conn:   s.conn,
		leases: path.Join(dir, "leases"),
		max:    leases,
		lock:   &rawLock{conn: s.conn, dir: path.Join(dir, "locks"), name: "lock-", rule: exclusive},
	}, nil
}

func (s *rawSession) Latch(ctx context.Context, dir string, onLeader func()) (candidate, error) {
	l := &rawLock{conn: s.conn, dir: dir, name: "latch-", rule: exclusive}
	if err := l.create(); err != nil {
		return nil, err
	}
	go func() {
		// The wait ends when we lead, or with an error when the session closes.
		if l.await(context.WithoutCancel(ctx)) == nil {
			onLeader()
		}
	}()
	return l, nil
}

// rule says whether the participant at index ours of the sorted children holds,
// and if not, which node to watch.
type rule func(sorted []string, ours int) (holds bool, watch int)

func exclusive(_ []string, ours int) (bool, int) { return ours == 0, ours - 1 }

// reader holds unless a writer is before it; it watches the nearest one.
func reader(sorted []string, ours int) (bool, int) {
	for i := ours - 1; i >= 0; i-- {
		if strings.HasPrefix(sorted[i], "write-") {
			return false, i
		}
	}
	return true, 0
}

// rawLock is one participant of a lock queue.
type rawLock struct {
	conn *zk.Conn
	dir  string
	name string
	rule rule
	node string // our node while queued or held
}

func (l *rawLock) Acquire(ctx context.Context) error {
	if err := l.create(); err != nil {
		return err
	}
	if err := l.await(ctx); err != nil {
		_ = l.conn.Delete(l.node, -1)
		return err
	}
	return nil
}

func (l *rawLock) Release(context.Context) error { return l.conn.Delete(l.node, -1) }

// Close leaves an election: our node goes.
func (l *rawLock) Close(ctx context.Context) error { return l.Release(ctx) }

func (l *rawLock) create() error {
	p, err := l.conn.Create(path.Join(l.dir, l.name), nil, zk.FlagEphemeral|zk.FlagSequence, openACL)
	l.node = p
	return err
}

func (l *rawLock) await(ctx context.Context) error {
	ours := path.Base(l.node)
	for {
		children, _, err := l.conn.Children(l.dir)
		if err != nil {
			return err
		}
		sortBySequence(children)
		i := indexOf(children, ours)
		if i < 0 {
			return fmt.Errorf("limit: %s is gone", l.node)
		}
		holds, watch := l.rule(children, i)
		if holds {
			_, _, _, err := l.conn.ExistsW(l.node)
			return err
		}
		_, _, ch, err := l.conn.GetW(path.Join(l.dir, children[watch]))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return ev.Err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// rawSemaphore is the operations of Curator's InterProcessSemaphoreV2: take the
// semaphore's lock, create a lease node, list the leases with a watch until ours is
// among the first max, give the lock back; release deletes the lease node.
type rawSemaphore struct {
	conn   *zk.Conn
	leases string
	max    int
	lock   *rawLock
	node   string
}

func (s *rawSemaphore) Acquire(ctx context.Context) error {
	if err := s.lock.Acquire(ctx); err != nil {
		return err
	}
	defer func() { _ = s.lock.Release(ctx) }()
	p, err := s.conn.Create(path.Join(s.leases, "lease-"), nil, zk.FlagEphemeral|zk.FlagSequence, openACL)
	if err != nil {
		return err
	}
	s.node = p
	for {
		children, _, ch, err := s.conn.ChildrenW(s.leases)
		if err != nil {
			return err
		}
		sortBySequence(children)
		if i := indexOf(children, path.Base(p)); i >= 0 && i < s.max {
			_, _, _, err := s.conn.ExistsW(p)
			return err
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return ev.Err
			}
		case <-ctx.Done():
			_ = s.conn.Delete(p, -1)
			return ctx.Err()
		}
	}
}

func (s *rawSemaphore) Release(context.Context) error { return s.conn.Delete(s.node, -1) }

// sortBySequence sorts node names by their ten-digit sequence suffix.
func sortBySequence(names []string) {
	sort.Slice(names, func(i, j int) bool { return sequence(names[i]) < sequence(names[j]) })
}

func sequence(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}
