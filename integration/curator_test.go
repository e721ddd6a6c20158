package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/election"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
	"github.com/zkrecipes/zkrecipes/recipes/rwlock"
	"github.com/zkrecipes/zkrecipes/recipes/semaphore"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func TestMutexGoAndJavaExcludeEachOther(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})

	// Go holds, Java waits.
	m, err := mutex.New(c, "/interop/mutex", mutex.WithID("go"))
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	java := zkrtest.StartCuratorPeer(t, "mutex", srv.Addr(), "/interop/mutex", "java")
	require.Eventually(t, func() bool {
		ps, err := m.Participants(ctx)
		return err == nil && len(ps) == 2
	}, wait, 10*time.Millisecond, "Curator queues behind us")
	ps, err := m.Participants(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"go", "java"}, []string{ps[0].ID, ps[1].ID})
	require.NoError(t, m.Release(ctx))
	node := strings.TrimPrefix(java.Expect(t, "ACQUIRED "), "ACQUIRED ")

	// Java holds, Go waits.
	ok, err := m.TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok, "Curator holds it")
	acquired := make(chan error, 1)
	go func() { acquired <- m.Acquire(ctx) }()
	require.Eventually(t, func() bool {
		ps, err := m.Participants(ctx)
		return err == nil && len(ps) == 2 && ps[0].Node == node
	}, wait, 10*time.Millisecond)
	java.Send(t, "release")
	java.Expect(t, "RELEASED")
	require.NoError(t, <-acquired)
	require.NoError(t, m.Release(ctx))
}

func TestMixedCrowdCountsExactly(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	setup := newClient(t, []string{srv.Addr()})
	_, err := setup.Create(ctx, "/interop/counter", []byte("0"), framework.CreatingParents())
	require.NoError(t, err)

	const perSide, cycles = 3, 20
	var javas []*zkrtest.CuratorPeer
	for i := range perSide {
		javas = append(javas, zkrtest.StartCuratorPeer(t, "count", srv.Addr(), "/interop/crowd", "/interop/counter", strconv.Itoa(cycles), fmt.Sprint("java-", i)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, perSide)
	for i := range perSide {
		c := newClient(t, []string{srv.Addr()})
		m, err := mutex.New(c, "/interop/crowd", mutex.WithID(fmt.Sprint("go-", i)))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range cycles {
				if err := m.Acquire(ctx); err != nil {
					errs <- err
					return
				}
				data, stat, err := c.Get(ctx, "/interop/counter")
				if err == nil {
					n, _ := strconv.Atoi(string(data))
					_, err = c.Set(ctx, "/interop/counter", []byte(strconv.Itoa(n+1)), stat.Version)
				}
				if releaseErr := m.Release(ctx); err == nil {
					err = releaseErr
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, j := range javas {
		j.Expect(t, "DONE")
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err, "a version conflict here means two holders at once")
	}
	data, _, err := setup.Get(ctx, "/interop/counter")
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(2*perSide*cycles), string(data))
}

func TestReadWriteLockWithCuratorNames(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	goLock, err := rwlock.New(c, "/interop/rw", rwlock.WithCuratorNames(), rwlock.WithID("go"))
	require.NoError(t, err)

	// Readers of both share.
	javaReader := zkrtest.StartCuratorPeer(t, "read", srv.Addr(), "/interop/rw", "java-reader")
	javaReader.Expect(t, "ACQUIRED")
	ok, err := goLock.ReadLock().TryAcquire(ctx)
	require.NoError(t, err)
	require.True(t, ok, "a Go reader shares with a Java reader")

	// A Java writer waits for both readers.
	javaWriter := zkrtest.StartCuratorPeer(t, "write", srv.Addr(), "/interop/rw", "java-writer")
	require.Eventually(t, func() bool {
		ps, err := goLock.WriteLock().Participants(ctx)
		return err == nil && len(ps) == 1 && ps[0].ID == "java-writer"
	}, wait, 10*time.Millisecond)
	require.NoError(t, goLock.ReadLock().Release(ctx))
	javaReader.Send(t, "release")
	javaReader.Expect(t, "RELEASED")
	javaWriter.Expect(t, "ACQUIRED")

	// A Go reader waits for the Java writer.
	ok, err = goLock.ReadLock().TryAcquire(ctx)
	require.NoError(t, err)
	require.False(t, ok, "a Java writer excludes Go readers")
	javaWriter.Send(t, "release")
	javaWriter.Expect(t, "RELEASED")

	// A Go writer excludes Java readers.
	require.NoError(t, goLock.WriteLock().Acquire(ctx))
	late := zkrtest.StartCuratorPeer(t, "read", srv.Addr(), "/interop/rw", "late-reader")
	require.Eventually(t, func() bool {
		ps, err := goLock.ReadLock().Participants(ctx)
		return err == nil && len(ps) == 1 && !ps[0].Holder
	}, wait, 10*time.Millisecond, "the Java reader queues behind the Go writer")
	require.NoError(t, goLock.WriteLock().Release(ctx))
	late.Expect(t, "ACQUIRED")
}

func TestSemaphoreMixedNeverOverLeases(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	const max = 3
	var javas []*zkrtest.CuratorPeer
	for i := range 2 {
		j := zkrtest.StartCuratorPeer(t, "lease", srv.Addr(), "/interop/sem", strconv.Itoa(max), fmt.Sprint("java-", i))
		j.Expect(t, "ACQUIRED")
		javas = append(javas, j)
	}
	c := newClient(t, []string{srv.Addr()})
	s, err := semaphore.New(c, "/interop/sem", max, semaphore.WithID("go-0"))
	require.NoError(t, err)
	first, err := s.Acquire(ctx, 1)
	require.NoError(t, err, "the third lease is free")
	_, err = s.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, semaphore.ErrNoLeases, "two Java leases and one Go lease: no fourth")

	other := newClient(t, []string{srv.Addr()})
	s2, err := semaphore.New(other, "/interop/sem", max, semaphore.WithID("go-1"))
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		leases, err := s2.Acquire(ctx, 1)
		if err == nil {
			err = leases[0].Release(ctx)
		}
		got <- err
	}()
	names, _, err := c.Children(ctx, "/interop/sem/leases")
	require.NoError(t, err)
	require.LessOrEqual(t, len(names), max+1, "held leases plus at most the one waiter's")
	javas[0].Send(t, "release")
	javas[0].Expect(t, "RELEASED")
	require.NoError(t, <-got, "a lease Curator returned goes to the Go waiter")
	require.NoError(t, first[0].Release(ctx))
}

func TestLatchMixedElection(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	java := zkrtest.StartCuratorPeer(t, "latch", srv.Addr(), "/interop/latch", "java-latch")
	java.Expect(t, "READY")
	java.Expect(t, "LEADER")

	c := newClient(t, []string{srv.Addr()})
	l, err := election.NewLatch(c, "/interop/latch", election.WithID("go-latch"))
	require.NoError(t, err)
	defer l.Close(ctx)
	require.NoError(t, l.Start(ctx))
	ps, err := l.Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, []election.Participant{
		{ID: "java-latch", Node: ps[0].Node, IsLeader: true, FencingToken: ps[0].FencingToken},
		{ID: "go-latch", Node: ps[1].Node, IsLeader: false, FencingToken: ps[1].FencingToken},
	}, ps, "we list Curator's participant with its id")
	require.Less(t, ps[0].FencingToken, ps[1].FencingToken, "Curator's node came first")

	java.Send(t, "participants")
	require.Equal(t, "PARTICIPANT java-latch true", java.Expect(t, "PARTICIPANT"))
	require.Equal(t, "PARTICIPANT go-latch false", java.Expect(t, "PARTICIPANT"), "Curator lists ours with its id")
	java.Expect(t, "END")

	java.Send(t, "release")
	java.Expect(t, "RELEASED")
	require.NoError(t, l.Await(ctx), "leadership crosses from Java to Go")
}

func TestSelectorMixedElection(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	leading := make(chan struct{})
	s, err := election.NewSelector(c, "/interop/selector", func(ctx context.Context, _ election.Term) error {
		close(leading)
		<-ctx.Done()
		return nil
	}, election.WithID("go-selector"))
	require.NoError(t, err)
	defer s.Close(ctx)
	require.NoError(t, s.Start(ctx))
	<-leading

	java := zkrtest.StartCuratorPeer(t, "selector", srv.Addr(), "/interop/selector", "java-selector")
	java.Expect(t, "READY")
	require.Eventually(t, func() bool {
		ps, err := s.Participants(ctx)
		return err == nil && len(ps) == 2
	}, wait, 10*time.Millisecond)
	java.Send(t, "participants")
	require.Equal(t, "PARTICIPANT go-selector true", java.Expect(t, "PARTICIPANT"))
	require.Equal(t, "PARTICIPANT java-selector false", java.Expect(t, "PARTICIPANT"))
	java.Expect(t, "END")

	require.NoError(t, s.Close(ctx))
	java.Expect(t, "LEADER") // leadership crosses from Go to Java
	leader, err := (&otherView{c}).leader(ctx, "/interop/selector")
	require.NoError(t, err)
	require.Equal(t, "java-selector", leader)
}

// otherView reads an election as a newcomer would.
type otherView struct{ c *framework.Client }

func (v *otherView) leader(ctx context.Context, p string) (string, error) {
	s, err := election.NewSelector(v.c, p, func(context.Context, election.Term) error { return nil })
	if err != nil {
		return "", err
	}
	l, err := s.Leader(ctx)
	return l.ID, err
}

func TestCuratorTakesOurNamesForProtected(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	c := newClient(t, []string{srv.Addr()})
	m, err := mutex.New(c, "/interop/names")
	require.NoError(t, err)
	require.NoError(t, m.Acquire(ctx))
	defer m.Release(ctx)
	name := path.Base(m.Node())
	java := zkrtest.StartCuratorPeer(t, "protected", name)
	require.Equal(t, "true", java.Expect(t, ""), "Curator's ProtectedUtils accepts %s", name)
}

func TestCacheGoAndJavaEndWithTheSameCopy(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	writer := newClient(t, []string{srv.Addr()})
	_, err := writer.Create(ctx, "/interop/cache/a", []byte("a"), framework.CreatingParents())
	require.NoError(t, err)

	java := zkrtest.StartCuratorPeer(t, "cache", srv.Addr(), "/interop/cache", "java-cache")
	java.Expect(t, "READY")
	ours, err := cache.New(newClient(t, []string{srv.Addr()}), "/interop/cache")
	require.NoError(t, err)
	defer ours.Close(context.Background())
	require.NoError(t, ours.Start(ctx))

	// A third client builds, changes and prunes a 3-level tree under both caches.
	paths := []string{"/interop/cache/a"}
	for i := range 300 {
		p := paths[rand.IntN(len(paths))]
		data := []byte(fmt.Sprint("v", i))
		switch r := rand.IntN(10); {
		case r < 3 && strings.Count(p, "/") < 5:
			if _, err := writer.Create(ctx, fmt.Sprintf("%s/n%d", p, i), data); err == nil {
				paths = append(paths, fmt.Sprintf("%s/n%d", p, i))
			}
		case r < 7:
			_, _ = writer.Set(ctx, p, data, -1)
		case r < 8:
			_, _ = writer.Multi(ctx, framework.DeleteOp(p, -1), framework.CreateOp(p, data))
		default:
			_ = writer.Delete(ctx, p, -1) // fails while p has children
		}
	}

	last := new(strings.Builder)
	require.Eventually(t, func() bool {
		last.Reset()
		server, err := copyOf(ctx, writer, "/interop/cache")
		if err != nil {
			last.WriteString(err.Error())
			return false
		}
		java.Send(t, "dump")
		var curator []string
		for line := java.Expect(t, ""); line != "END"; line = java.Expect(t, "") {
			curator = append(curator, strings.TrimPrefix(line, "NODE "))
		}
		var go_ []string
		for _, n := range ours.Nodes() {
			go_ = append(go_, fmt.Sprintf("%s %d %d %s", n.Path, n.Stat.Czxid, n.Stat.Version, base64.StdEncoding.EncodeToString(n.Data)))
		}
		fmt.Fprintf(last, "server %d nodes, Curator %d, ours %d", len(server), len(curator), len(go_))
		return slices.Equal(server, curator) && slices.Equal(server, go_)
	}, wait, 50*time.Millisecond, "the copies never agreed: %s", last)
}

// copyOf lists a subtree as the peer's dump does: path, czxid, version, base64 data,
// sorted by path.
func copyOf(ctx context.Context, c *framework.Client, root string) ([]string, error) {
	data, stat, err := c.Get(ctx, root)
	if err != nil {
		return nil, err
	}
	names, _, err := c.Children(ctx, root)
	if err != nil {
		return nil, err
	}
	out := []string{fmt.Sprintf("%s %d %d %s", root, stat.Czxid, stat.Version, base64.StdEncoding.EncodeToString(data))}
	for _, name := range names {
		sub, err := copyOf(ctx, c, root+"/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	slices.Sort(out)
	return out, nil
}
