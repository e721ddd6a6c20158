package framework

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// TestCredentialsNeverShown runs a client with credentials through a connection, a
// refused request, a session expiry and the reconnection after it, logging
// everything, and looks for the secret, in any encoding, in every log line (with
// its attributes), every error and every way of printing the client.
func TestCredentialsNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "alice:pa55-w0rd-never-shown"
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	logs := &logBuffer{}
	logger := slog.New(logs.handler())
	c := newClient(t, []string{proxy.Addr()}, WithSessionTimeout(2*time.Second), WithLogger(logger),
		WithAuth("digest", []byte(secret)), WithACL(FixedACL(zk.AuthACL(zk.PermAll)...)))
	other := newClient(t, []string{srv.Addr()}, WithLogger(logger),
		WithAuth("digest", []byte("mallory:other")), WithACL(FixedACL(zk.AuthACL(zk.PermAll)...)))
	ctx := testCtx(t)
	var errs []error
	expect := func(err error) {
		t.Helper()
		require.Error(t, err)
		errs = append(errs, err)
	}

	_, err := c.Create(ctx, "/alice/child", nil, CreatingParents())
	require.NoError(t, err)
	_, err = other.Create(ctx, "/mallory", nil)
	require.NoError(t, err)
	_, _, err = c.Get(ctx, "/mallory")
	require.ErrorIs(t, err, zk.ErrNoAuth)
	require.ErrorContains(t, err, "refused by an ACL (client credentials: digest)", "the scheme, not the secret")
	expect(err)
	_, err = c.Create(ctx, "/mallory/child", nil)
	expect(err)
	expect(other.Delete(ctx, "/alice/child", -1))

	states := listen(c)
	require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
	require.Eventually(t, func() bool {
		s := states.get()
		return len(s) > 0 && s[len(s)-1] == Reconnected
	}, wait, 10*time.Millisecond)
	_, err = c.Create(ctx, "/alice/after-expiry", nil)
	require.NoError(t, err, "the credentials were sent again for the new session")
	_, _, err = c.Children(ctx, "/mallory")
	expect(err)

	forms := secretForms([]byte(secret))
	require.NotEmpty(t, logs.String(), "the client logged")
	for _, form := range forms {
		require.NotContains(t, logs.String(), form)
		for _, err := range errs {
			require.NotContains(t, err.Error(), form)
			require.NotContains(t, fmt.Sprintf("%+v", err), form)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			require.NotContains(t, fmt.Sprintf(verb, c), form, verb)
		}
	}
}

// secretForms is how a secret could show in text: as itself, its password alone,
// and the encodings fmt and slog give a []byte (hex, base64, decimal bytes).
func secretForms(secret []byte) []string {
	return []string{
		string(secret),
		string(secret[bytes.IndexByte(secret, ':')+1:]),
		hex.EncodeToString(secret),
		fmt.Sprintf("%X", secret),
		base64.StdEncoding.EncodeToString(secret),
		fmt.Sprint(secret)[1 : len(fmt.Sprint(secret))-1],
	}
}

// logBuffer keeps every record, at every level, written in full by slog's text and
// JSON handlers, so that attributes are searched the way each would print them.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) handler() slog.Handler {
	all := &slog.HandlerOptions{Level: slog.LevelDebug - 10}
	return bothHandlers{slog.NewTextHandler(b, all), slog.NewJSONHandler(b, all)}
}

type bothHandlers [2]slog.Handler

func (h bothHandlers) Enabled(ctx context.Context, l slog.Level) bool {
	return h[0].Enabled(ctx, l) || h[1].Enabled(ctx, l)
}

func (h bothHandlers) Handle(ctx context.Context, r slog.Record) error {
	if err := h[0].Handle(ctx, r.Clone()); err != nil {
		return err
	}
	return h[1].Handle(ctx, r)
}

func (h bothHandlers) WithAttrs(attrs []slog.Attr) slog.Handler {
	return bothHandlers{h[0].WithAttrs(attrs), h[1].WithAttrs(attrs)}
}

func (h bothHandlers) WithGroup(name string) slog.Handler {
	return bothHandlers{h[0].WithGroup(name), h[1].WithGroup(name)}
}
