package driver

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// go-zookeeper's own zk.Lock: the bare Go peer. It has a mutex and nothing else, so it
// runs the mutex workloads, and the leader hand-over as a go-zookeeper user would
// write it (whoever holds the lock leads). It takes no context: its waits end when
// the lock comes or the session closes.
func newZKLock(addr string) contender {
	return &goContender{
		name:  "zk.Lock",
		kinds: []kind{cycles, contended, handover, queue},
		addr:  addr,
		dial: func(ctx context.Context, addr string) (goSession, error) {
			conn, err := dialZK(ctx, addr)
			if err != nil {
				return nil, err
			}
			return &zkLockSession{conn: conn}, nil
		},
	}
}

type zkLockSession struct{ conn *zk.Conn }

func (s *zkLockSession) Close() { s.conn.Close() }

func (s *zkLockSession) Mutex(path string) (locker, error) {
	return zkLocker{zk.NewLock(s.conn, path, openACL)}, nil
}

func (s *zkLockSession) ReadLock(string) (locker, error)       { return nil, errUnsupported }
func (s *zkLockSession) WriteLock(string) (locker, error)      { return nil, errUnsupported }
func (s *zkLockSession) Semaphore(string, int) (locker, error) { return nil, errUnsupported }

func (s *zkLockSession) Latch(_ context.Context, path string, onLeader func()) (candidate, error) {
	l := zkLatch{l: zk.NewLock(s.conn, path, openACL), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		if l.l.Lock() == nil {
			onLeader()
		}
	}()
	return l, nil
}

// zkLatch is a zk.Lock whose Lock runs on a goroutine of its own: zk.Lock is not
// safe for concurrent use, so Close unlocks only once that Lock has returned (a
// candidate still waiting holds nothing; its session's close deletes its node), as
// the race detector asked of a Close that met a Lock just returned.
type zkLatch struct {
	l    *zk.Lock
	done chan struct{}
}

func (z zkLatch) Close(context.Context) error {
	select {
	case <-z.done:
		return z.l.Unlock()
	default:
		return zk.ErrNotLocked
	}
}

type zkLocker struct{ l *zk.Lock }

func (z zkLocker) Acquire(context.Context) error   { return z.l.Lock() }
func (z zkLocker) Release(context.Context) error   { return z.l.Unlock() }
func (z zkLocker) Close(ctx context.Context) error { return z.Release(ctx) }
