package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

func TestServerServesAndKeepsDataAcrossRestart(t *testing.T) {
	s := NewServer(t)
	ctx := context.Background()

	out, err := s.FourLetter(ctx, "ruok")
	require.NoError(t, err)
	require.Equal(t, "imok", out)

	conn, events := connect(t, []string{s.Addr()}, 4*time.Second)
	_, err = conn.Create("/kept", []byte("v1"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	data, _, err := conn.Get("/kept")
	require.NoError(t, err)
	require.Equal(t, "v1", string(data))

	s.Stop()
	waitState(t, events, zk.StateDisconnected)
	require.NoError(t, s.Start())
	waitState(t, events, zk.StateHasSession)

	data, _, err = conn.Get("/kept")
	require.NoError(t, err)
	require.Equal(t, "v1", string(data), "a restart keeps the data")
}

func TestCloseLeavesNoProcessAndNoDirectory(t *testing.T) {
	s, err := StartServer(context.Background())
	require.NoError(t, err)
	pid, dir := s.m.pid(), s.m.dir
	require.NotZero(t, pid)
	require.DirExists(t, dir)

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")

	require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the java process is gone")
	_, err = os.Stat(dir)
	require.True(t, os.IsNotExist(err), "the server's directory is gone")
}

func TestMissingZooKeeperNamesTheInstallCommand(t *testing.T) {
	_, err := StartServer(context.Background(), WithZooKeeper("/nonexistent/java"))
	require.ErrorIs(t, err, ErrNotInstalled)
	require.Contains(t, err.Error(), "make deps")
	require.Contains(t, err.Error(), "apt-get install -y --no-install-recommends zookeeper")
}

func TestFailedStartReportsTheServerLog(t *testing.T) {
	_, err := StartServer(context.Background(), WithConfig("syncLimit=not-a-number"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "exited during start-up")
	require.Contains(t, err.Error(), `For input string: "not-a-number"`, "the error carries the server's own complaint")
}

func TestBadOptions(t *testing.T) {
	for name, opt := range map[string]Option{
		"tick":      WithTickTime(0),
		"sessions":  WithSessionTimeouts(4*time.Second, time.Second),
		"container": WithContainerCheckInterval(0),
		"heap":      WithHeapMB(1),
		"nil":       nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := StartServer(context.Background(), opt)
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), "zktest: "), err.Error())
		})
	}
	_, err := StartEnsemble(context.Background(), 0)
	require.Error(t, err)
	_, err = FourLetter(context.Background(), "127.0.0.1:1", "toolong")
	require.Error(t, err)
}

func TestEnsembleSurvivesItsLeader(t *testing.T) {
	e := NewEnsemble(t, 3)
	require.Len(t, e.Addrs(), 3)
	leader := e.Leader()
	require.GreaterOrEqual(t, leader, 0, "a quorum has a leader")

	conn, _ := connect(t, e.Addrs(), 4*time.Second)
	_, err := conn.Create("/before", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	e.Stop(leader)
	require.Eventually(t, func() bool {
		l := e.Leader()
		return l >= 0 && l != leader
	}, 30*time.Second, 50*time.Millisecond, "the two survivors elect a new leader")

	// The client may be on the dead member: a write goes through once it has moved on.
	require.Eventually(t, func() bool {
		_, err := conn.Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
		return err == nil || errors.Is(err, zk.ErrNodeExists)
	}, 30*time.Second, 50*time.Millisecond, "the remaining quorum serves writes")
	ok, _, err := conn.Exists("/before")
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, e.Start(leader), "the old leader rejoins as a follower")
}

func TestFixedClientPort(t *testing.T) {
	free, err := freePorts(1)
	require.NoError(t, err)
	s := NewServer(t, WithClientPort(free[0]))
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(free[0]), s.Addr())

	_, err = StartServer(context.Background(), WithClientPort(free[0]))
	require.ErrorContains(t, err, "is in use", "a taken port is an error, not retried elsewhere")
	_, err = StartEnsemble(context.Background(), 3, WithClientPort(free[0]))
	require.Error(t, err)
	_, err = StartServer(context.Background(), WithClientPort(-1))
	require.Error(t, err)
}

// failedTB is a test that has failed, and keeps what it is told to log.
type failedTB struct {
	testing.TB
	logs []string
}

func (f *failedTB) Failed() bool { return true }

func (f *failedTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// A failed test's server leaves its directory, with server.log, and says where.
func TestAFailedTestKeepsTheServersDirectory(t *testing.T) {
	ft := &failedTB{TB: t}
	var dir string
	t.Cleanup(func() { // runs after the server's Close, registered later
		_, err := os.Stat(filepath.Join(dir, "server.log"))
		require.NoError(t, err, "the server's log is kept")
		require.Len(t, ft.logs, 1)
		require.Contains(t, ft.logs[0], dir)
		require.NoError(t, os.RemoveAll(dir))
	})
	dir = NewServer(ft).m.dir
}

// CloseKeeping leaves each member's data, transaction logs included, where it was
// asked to, and once closed there is nothing left to keep.
func TestEnsembleCloseKeepingKeepsTheData(t *testing.T) {
	e := NewEnsemble(t, 3)
	conn, _ := connect(t, e.Addrs(), 4*time.Second)
	_, err := conn.Create("/kept", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, e.CloseKeeping(dir))
	for i := 1; i <= 3; i++ {
		logs, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("server%d", i), "data", "version-2", "log.*"))
		require.NoError(t, err)
		require.NotEmpty(t, logs, "server%d's transaction log", i)
		log, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("server%d", i), "server.log"))
		require.NoError(t, err)
		require.Regexp(t, `(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d) \[`, string(log), "its lines say when")
	}
	require.ErrorIs(t, e.CloseKeeping(dir), ErrEnsembleClosed)
}
