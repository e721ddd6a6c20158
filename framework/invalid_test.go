package framework

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bad input gets the documented error, at once and naming the problem: never a
// panic, a hang or a round trip to the server.

func TestNewRefusesBadInput(t *testing.T) {
	for _, servers := range [][]string{nil, {}, {""}, {"  "}, {"a b:2181"}, {"a:1,b:1"}, {"a:1/chroot"}} {
		_, err := New(servers)
		require.ErrorIs(t, err, ErrInvalidOption, "%q", servers)
	}
	for _, tt := range []struct {
		name   string
		opt    Option
		target error  // wrapped besides ErrInvalidOption, if any
		says   string // part of the message that names the problem
	}{
		{"zero session timeout", WithSessionTimeout(0), nil, "session timeout 0s"},
		{"negative session timeout", WithSessionTimeout(-time.Second), nil, "session timeout -1s"},
		{"session timeout past int32 ms", WithSessionTimeout((math.MaxInt32 + 1) * time.Millisecond), nil, "session timeout"},
		{"zero connection timeout", WithConnectionTimeout(0), nil, "connection timeout 0s"},
		{"negative connection timeout", WithConnectionTimeout(-time.Second), nil, "connection timeout -1s"},
		{"nil retry policy", WithRetryPolicy(nil), nil, "nil retry policy"},
		{"exponential base 0", WithRetryPolicy(ExponentialBackoff(0, 3)), ErrInvalidRetryPolicy, "ExponentialBackoff: base 0s"},
		{"exponential negative retries", WithRetryPolicy(ExponentialBackoff(time.Second, -1)), ErrInvalidRetryPolicy, "maxRetries -1"},
		{"bounded max below base", WithRetryPolicy(BoundedExponentialBackoff(2*time.Second, time.Second, 3)), ErrInvalidRetryPolicy, "max 1s < base 2s"},
		{"n times negative", WithRetryPolicy(RetryNTimes(-1, 0)), ErrInvalidRetryPolicy, "RetryNTimes: n -1"},
		{"n times negative sleep", WithRetryPolicy(RetryNTimes(1, -time.Second)), ErrInvalidRetryPolicy, "sleep -1s"},
		{"one time negative sleep", WithRetryPolicy(RetryOneTime(-time.Second)), ErrInvalidRetryPolicy, "RetryOneTime: sleep -1s"},
		{"until elapsed zero", WithRetryPolicy(RetryUntilElapsed(0, 0)), ErrInvalidRetryPolicy, "maxElapsed 0s"},
		{"until elapsed negative sleep", WithRetryPolicy(RetryUntilElapsed(time.Second, -1)), ErrInvalidRetryPolicy, "sleep -1ns"},
		{"forever without pause", WithRetryPolicy(RetryForever(0)), ErrInvalidRetryPolicy, "RetryForever: sleep 0s"},
		{"namespace with a leading slash", WithNamespace("/app"), ErrInvalidNamespace, `starts with "/"`},
		{"namespace with a trailing slash", WithNamespace("app/"), ErrInvalidNamespace, `ends with "/"`},
		{"namespace with an empty segment", WithNamespace("a//b"), ErrInvalidNamespace, "empty segment"},
		{"namespace with a dot segment", WithNamespace("a/./b"), ErrInvalidNamespace, `relative segment "."`},
		{"namespace zookeeper", WithNamespace("zookeeper"), ErrInvalidNamespace, "reserved"},
		{"namespace under zookeeper", WithNamespace("zookeeper/app"), ErrInvalidNamespace, "reserved"},
		{"namespace with NUL", WithNamespace("a\x00b"), ErrInvalidNamespace, "U+0000"},
		{"namespace not UTF-8", WithNamespace("a\xffb"), ErrInvalidNamespace, "not valid UTF-8"},
		{"empty auth scheme", WithAuth("", []byte("user:secret")), nil, "empty auth scheme"},
		{"nil ACL provider", WithACL(nil), nil, "nil ACL provider"},
		{"empty ACL", WithACL(FixedACL()), nil, "default ACL is empty"},
		{"nil error policy", WithErrorPolicy(nil), nil, "nil error policy"},
		{"nil logger", WithLogger(nil), nil, "nil logger"},
		{"nil dialer", WithDialer(nil), nil, "nil dialer"},
		{"nil TLS config", WithTLS(nil), nil, "nil TLS config"},
		{"zero max data size", WithMaxDataSize(0), nil, "max data size 0 must be from 1 to"},
		{"max data size over go-zookeeper's buffer", WithMaxDataSize(2 << 20), nil, "go-zookeeper sends at most 1.5 MiB"},
		{"nil option", nil, nil, "nil Option"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New([]string{"127.0.0.1:1"}, tt.opt)
			require.Nil(t, c)
			require.ErrorIs(t, err, ErrInvalidOption)
			if tt.target != nil {
				require.ErrorIs(t, err, tt.target)
			}
			require.ErrorContains(t, err, tt.says)
		})
	}
	_, err := New([]string{"127.0.0.1:1"}, WithAuth("digest", []byte("user:secret")), WithAuth("", []byte("user:secret")))
	require.NotContains(t, err.Error(), "secret", "credentials stay out of errors")
}

func TestOperationsRefuseBadInput(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	ctx := testCtx(t)

	// Every operation, on a path.
	ops := map[string]func(p string) error{
		"Create":    func(p string) error { _, err := c.Create(ctx, p, nil); return err },
		"Get":       func(p string) error { _, _, err := c.Get(ctx, p); return err },
		"GetW":      func(p string) error { _, _, _, err := c.GetW(ctx, p); return err },
		"Exists":    func(p string) error { _, _, err := c.Exists(ctx, p); return err },
		"ExistsW":   func(p string) error { _, _, _, err := c.ExistsW(ctx, p); return err },
		"Children":  func(p string) error { _, _, err := c.Children(ctx, p); return err },
		"ChildrenW": func(p string) error { _, _, _, err := c.ChildrenW(ctx, p); return err },
		"Set":       func(p string) error { _, err := c.Set(ctx, p, nil, -1); return err },
		"Delete":    func(p string) error { return c.Delete(ctx, p, -1) },
	}
	writes := []string{"Create", "Set", "Delete"}
	bad := []string{"", "a", "a/b", "/a/", "//", "/a//b", "/a/./b", "/a/../b", "/..", "\x00", "/\x00", "/a\nb", "/\xff", "/\U0001F600"}
	for name, op := range ops {
		for _, p := range bad {
			err := op(p)
			require.ErrorIs(t, err, ErrInvalidPath, "%s(%q)", name, p)
			require.ErrorContains(t, err, strconv.Quote(p), "%s(%q) names the path", name, p)
		}
	}
	for _, name := range writes {
		for _, p := range []string{"/zookeeper", "/zookeeper/x", "/zookeeper/quota/x"} {
			err := ops[name](p)
			require.ErrorIs(t, err, ErrInvalidPath, "%s(%q)", name, p)
			require.ErrorContains(t, err, "reserved for ZooKeeper", "%s(%q)", name, p)
		}
	}
	require.NoError(t, ops["Get"]("/zookeeper"), "reading ZooKeeper's subtree is fine")

	_, err := c.Create(ctx, "/", nil)
	require.ErrorIs(t, err, ErrInvalidPath)
	_, err = c.Create(ctx, "/", nil, Protected(), Ephemeral(), Sequential())
	require.ErrorIs(t, err, ErrInvalidPath)
	require.ErrorIs(t, c.Delete(ctx, "/", -1), ErrInvalidPath)
	for name, opts := range map[string][]CreateOption{
		"container and ephemeral":  {Container(), Ephemeral()},
		"container and sequential": {Container(), Sequential()},
		"nil create option":        {Ephemeral(), nil},
	} {
		_, err := c.Create(ctx, "/c", nil, opts...)
		require.ErrorIs(t, err, ErrInvalidCreate, name)
	}
	require.ErrorIs(t, c.Delete(ctx, "/c", -1, nil), ErrInvalidOption)
	require.ErrorIs(t, c.Retry(ctx, nil), ErrInvalidOption)

	// Data the server would answer by dropping the connection is refused here, and
	// the connection stays up; the largest allowed is accepted.
	// The path counts too: a long one with data at the limit would be dropped.
	big := make([]byte, DefaultMaxDataSize-len("/big"))
	_, err = c.Create(ctx, "/big", append(big, 0))
	require.ErrorIs(t, err, ErrDataTooLarge)
	require.ErrorContains(t, err, fmt.Sprintf("%d bytes of data and path for /big, at most %d", DefaultMaxDataSize+1, DefaultMaxDataSize))
	_, err = c.Create(ctx, "/big", big, Protected())
	require.ErrorIs(t, err, ErrDataTooLarge, "a protected name is longer")
	_, err = c.Set(ctx, "/big", append(big, 0), -1)
	require.ErrorIs(t, err, ErrDataTooLarge)
	long := "/" + strings.Repeat("p", 900)
	_, err = c.Create(ctx, long, big)
	require.ErrorIs(t, err, ErrDataTooLarge)
	_, err = c.Create(ctx, "/big", big)
	require.NoError(t, err, "the default limit fits the server's")
	require.NoError(t, c.Delete(ctx, "/big", -1))
	require.Equal(t, Connected, c.State())

	// An ended context sends nothing: the root's children have not changed once the
	// client's background work (which would delete what an abandoned create made) is
	// over.
	_, before, err := c.Exists(ctx, "/")
	require.NoError(t, err)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Create(ended, "/never", nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = c.Create(ended, "/never", nil, Protected(), Ephemeral(), Sequential())
	require.ErrorIs(t, err, context.Canceled)
	c.requests.bg.Wait()
	_, after, err := c.Exists(ctx, "/")
	require.NoError(t, err)
	require.Equal(t, before.Cversion, after.Cversion, "a create was sent for an ended context")
	stop := c.Listen(nil)
	stop()

	names, _, err := c.Children(ctx, "/")
	require.NoError(t, err)
	require.Equal(t, []string{"zookeeper"}, names, "no bad input reached the server")

	// Under a namespace, the user's /zookeeper is an ordinary node.
	app := newClient(t, []string{srv.Addr()}, WithNamespace("app"))
	_, err = app.Create(ctx, "/zookeeper", nil)
	require.NoError(t, err)
	require.NoError(t, app.Delete(ctx, "/zookeeper", -1))
}

func TestAClosedClientSaysSo(t *testing.T) {
	srv := sharedServer(t)
	c := newClient(t, []string{srv.Addr()})
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	// A context without a deadline: a hang would fail the test by its timeout.
	ctx := context.Background()
	require.ErrorIs(t, c.WaitConnected(ctx), ErrClosed)
	require.ErrorIs(t, c.Retry(ctx, func(context.Context) error { return nil }), ErrClosed)
	for name, op := range map[string]func() error{
		"Create":     func() error { _, err := c.Create(ctx, "/a", nil); return err },
		"protected":  func() error { _, err := c.Create(ctx, "/a", nil, Protected(), Ephemeral(), Sequential()); return err },
		"Get":        func() error { _, _, err := c.Get(ctx, "/a"); return err },
		"GetW":       func() error { _, _, _, err := c.GetW(ctx, "/a"); return err },
		"Exists":     func() error { _, _, err := c.Exists(ctx, "/a"); return err },
		"ExistsW":    func() error { _, _, _, err := c.ExistsW(ctx, "/a"); return err },
		"Children":   func() error { _, _, err := c.Children(ctx, "/"); return err },
		"ChildrenW":  func() error { _, _, _, err := c.ChildrenW(ctx, "/"); return err },
		"Set":        func() error { _, err := c.Set(ctx, "/a", nil, -1); return err },
		"Delete":     func() error { return c.Delete(ctx, "/a", -1) },
		"guaranteed": func() error { return c.Delete(ctx, "/a", -1, Guaranteed()) },
	} {
		require.ErrorIs(t, op(), ErrClosed, name)
	}
	require.Error(t, c.ForRecipes().Context().Err(), "the client's context ended")
	stop := c.Listen(func(ConnectionState) { t.Error("a closed client has no more states") })
	stop()
}
