package framework

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ErrInvalidOption is wrapped by every error New returns for a bad argument, and by
// those for a nil DeleteOption and a nil operation to Retry.
var ErrInvalidOption = errors.New("framework: invalid option")

// Option configures a Client.
type Option func(*options) error

type authInfo struct {
	scheme string
	auth   []byte
}

type options struct {
	sessionTimeout    time.Duration
	connectionTimeout time.Duration
	retry             RetryPolicy
	namespace         string
	auth              []authInfo
	acl               ACLProvider
	errorPolicy       ErrorPolicy
	logger            *slog.Logger // nil: silent, but for the first failed connection of a run
	retryFirst        bool         // retry waits for a connection before the first session too
	dialer            zk.Dialer
	resolver          *net.Resolver
	ensembleTracking  bool
	tls               *tls.Config // nil for plaintext
	sasl              *saslLogin  // nil without SASL
	maxData           int
	maxPacket         int
	oneShotWatches    bool // AddWatch refuses: the recipes follow state on one-shot watches
	meterProvider     metric.MeterProvider
	tracerProvider    trace.TracerProvider
}

func defaultOptions() options {
	return options{
		sessionTimeout:    60 * time.Second,
		connectionTimeout: 15 * time.Second,
		retry:             BoundedExponentialBackoff(100*time.Millisecond, 5*time.Second, 10),
		acl:               FixedACL(zk.WorldACL(zk.PermAll)...),
		errorPolicy:       StandardErrorPolicy,
		dialer:            net.DialTimeout,
		resolver:          net.DefaultResolver,
		maxData:           DefaultMaxDataSize,
		maxPacket:         DefaultMaxPacketSize,
		meterProvider:     metricnoop.NewMeterProvider(),
		tracerProvider:    tracenoop.NewTracerProvider(),
	}
}

func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}

// WithSessionTimeout asks the server for this session timeout; the server clamps it
// to its own range (2 to 20 ticks by default). Default 60 s, Curator's. A session
// outlives a disconnection this long: Suspended turns into Lost after it.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) error {
		// go-zookeeper sends whole milliseconds as an int32.
		if d < time.Millisecond || d > math.MaxInt32*time.Millisecond {
			return invalidOption("session timeout %v is not between 1ms and %v", d, math.MaxInt32*time.Millisecond)
		}
		o.sessionTimeout = d
		return nil
	}
}

// WithConnectionTimeout bounds each wait of an operation for a connection. Default
// 15 s, Curator's. A wait that runs out is a connection error (a *ConnectError
// wrapping zk.ErrNoServer): once the client has had a session, the retry policy
// retries it, so an operation of a Suspended client may wait up to (retries + 1)
// connection timeouts plus the policy's pauses; before the client has ever reached a
// server, it is final unless WithRetryBeforeFirstConnection, so a wrong address or an
// ensemble that is down fails an operation within one connection timeout.
func WithConnectionTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalidOption("connection timeout %v must be positive", d)
		}
		o.connectionTimeout = d
		return nil
	}
}

// WithRetryPolicy sets how failed operations are retried (see IsRetryable for which
// failures are). Default BoundedExponentialBackoff(100ms, 5s, 10).
func WithRetryPolicy(p RetryPolicy) Option {
	return func(o *options) error {
		if p == nil {
			return invalidOption("nil retry policy")
		}
		if v, ok := p.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidOption, err)
			}
		}
		o.retry = p
		return nil
	}
}

// WithRetryBeforeFirstConnection has the retry policy retry an operation's wait for a
// connection that ran out before the client ever reached a server, as Curator does:
// for a program that may start before its ensemble and would rather have its first
// operations wait (up to (retries + 1) connection timeouts plus the policy's pauses)
// than fail. Default off: until the first session, an operation fails after one
// connection timeout at most, and says why the last attempt to connect failed.
func WithRetryBeforeFirstConnection() Option {
	return func(o *options) error {
		o.retryFirst = true
		return nil
	}
}

// WithNamespace puts every path of the client under /ns: "/locks/a" is stored at
// "/ns/locks/a", and paths handed back leave the namespace out. ns is written
// without slashes at the ends ("app" or "app/sub"). Default none.
func WithNamespace(ns string) Option {
	return func(o *options) error {
		if err := validateNamespace(ns); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.namespace = ns
		return nil
	}
}

// WithAuth adds credentials (for example scheme "digest", auth "user:password"),
// sent before any request of every connection and every new session. May be given
// more than once. Default none.
func WithAuth(scheme string, auth []byte) Option {
	return func(o *options) error {
		if scheme == "" {
			return invalidOption("empty auth scheme")
		}
		o.auth = append(o.auth, authInfo{scheme, append([]byte(nil), auth...)})
		return nil
	}
}

// WithACL sets the ACL provider for every node the client creates, container parents
// included. Default FixedACL(WorldACL(PermAll)...), Curator's default: open to all.
// Any client that reaches the servers, with credentials or without, may then read,
// change and delete those nodes, and so delete a lock holder's node and take the lock
// beside it. With WithAuth, WithACL(FixedACL(AuthACL(PermAll)...)) keeps them to the
// client's credentials.
func WithACL(p ACLProvider) Option {
	return func(o *options) error {
		if p == nil {
			return invalidOption("nil ACL provider")
		}
		if len(p.DefaultACL()) == 0 {
			return invalidOption("the ACL provider's default ACL is empty")
		}
		o.acl = p
		return nil
	}
}

// WithErrorPolicy sets which connection states recipes treat as losing what they
// hold. Default StandardErrorPolicy.
func WithErrorPolicy(p ErrorPolicy) Option {
	return func(o *options) error {
		if p == nil {
			return invalidOption("nil error policy")
		}
		o.errorPolicy = p
		return nil
	}
}

// WithLogger sets where the client and go-zookeeper log (go-zookeeper's lines at
// Debug). Default: silent but for one warning, sent to slog.Default() when a server
// cannot be reached (the first failed attempt of a run, until a server answers),
// since an address that nothing reports looks like a hang.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return invalidOption("nil logger")
		}
		o.logger = l
		return nil
	}
}

// WithDialer sets how TCP connections to servers are made, for example through a
// proxy. It is given addresses, not names: the client resolves each server's name
// itself, on every attempt (see WithResolver). With WithTLS, TLS runs over the
// connections it makes. Default net.DialTimeout.
func WithDialer(d Dialer) Option {
	return func(o *options) error {
		if d == nil {
			return invalidOption("nil dialer")
		}
		o.dialer = d
		return nil
	}
}

// WithTLS connects to the servers over TLS, configured by a copy of cfg: list the
// servers' secure client ports (ZooKeeper's secureClientPort) in New. A cfg without a
// ServerName verifies each server's certificate against the host as written in the
// server list. The handshake must end within the connection timeout (or the session
// timeout, if shorter). A server whose certificate is not trusted is retried like an
// unreachable one; WaitConnected's error says why the last attempt failed. Default:
// plaintext.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) error {
		if cfg == nil {
			return invalidOption("nil TLS config")
		}
		o.tls = cfg.Clone()
		return nil
	}
}

// DefaultMaxDataSize is the most data and path a Create or Set sends by default:
// ZooKeeper's default jute.maxbuffer (1 MiB less one byte) less 1 KiB for the ACL
// and the request's header. A server refuses a larger request by dropping the
// connection, which would look like a fault and cost the client's holds their
// Suspended.
const DefaultMaxDataSize = 0xfffff - 1024

// maxRequest is go-zookeeper's send buffer: it cannot send a larger request at all.
const maxRequest = 1536 * 1024

// WithMaxDataSize sets the most data and path (namespace included) a Create or Set
// sends, for servers configured with a larger jute.maxbuffer; go-zookeeper sends no
// request over 1.5 MiB, so n can be at most 1.5 MiB less 1 KiB. Larger requests get
// an error wrapping ErrDataTooLarge, and nothing is sent. Default DefaultMaxDataSize.
func WithMaxDataSize(n int) Option {
	return func(o *options) error {
		if n <= 0 || n > maxRequest-1024 {
			return invalidOption("max data size %d must be from 1 to %d (go-zookeeper sends at most 1.5 MiB)", n, maxRequest-1024)
		}
		o.maxData = n
		return nil
	}
}

// DefaultMaxPacketSize is the largest packet the client reads from a server by
// default. A server bounds the requests it reads (jute.maxbuffer, 1 MiB by default)
// but not its replies: a listing of a node with a few hundred thousand children is
// larger, and a reply that large is read. A length above the maximum is what a
// broken or hostile server announces; reading it would take that much memory.
const DefaultMaxPacketSize = 16 << 20

// WithMaxPacketSize sets the largest packet the client reads from a server, 1 KiB at
// least. A larger connect response fails the attempt to connect (ConnectError says
// why); a larger reply fails its request with an error wrapping ErrPacketTooLarge,
// and is skipped without being held in memory. Default DefaultMaxPacketSize.
func WithMaxPacketSize(n int) Option {
	return func(o *options) error {
		if n < 1024 {
			return invalidOption("max packet size %d is below 1 KiB", n)
		}
		o.maxPacket = n
		return nil
	}
}

// WithOneShotWatches makes AddWatch refuse with ErrPersistentWatchUnsupported, as a
// server before ZooKeeper 3.6 does, so that the recipes follow state with one-shot
// watches: for comparing the two, or for a server that mishandles persistent ones.
func WithOneShotWatches() Option {
	return func(o *options) error {
		o.oneShotWatches = true
		return nil
	}
}

// ACLProvider chooses the ACL of each node the client creates.
type ACLProvider interface {
	// DefaultACL is used where ACLForPath returns nothing.
	DefaultACL() []ACL
	// ACLForPath may return a specific ACL for a path; the path is the server's,
	// namespace included, as in Curator.
	ACLForPath(path string) []ACL
}

// FixedACL is an ACLProvider that gives every node the same ACL.
func FixedACL(acl ...ACL) ACLProvider { return fixedACL(acl) }

type fixedACL []zk.ACL

func (a fixedACL) DefaultACL() []zk.ACL       { return a }
func (a fixedACL) ACLForPath(string) []zk.ACL { return nil }
