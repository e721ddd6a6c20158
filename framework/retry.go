package framework

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
)

// ErrInvalidRetryPolicy is wrapped by the Validate error of every retry policy in
// this package. The constructors cannot return errors, so a bad argument is reported
// when the policy is handed to the client, not when it is built.
var ErrInvalidRetryPolicy = errors.New("framework: invalid retry policy")

// RetryPolicy decides how often, and after which pauses, an operation that failed
// with a retryable error (see IsRetryable) is tried again.
//
// A policy is a factory rather than a BackOff because a BackOff has state (how many
// retries are spent, when the first attempt started): every operation asks for its
// own, so concurrent operations never consume each other's retries. Policies are
// immutable and safe for concurrent use; a BackOff belongs to one operation and is
// not. Following the backoff package, NextBackOff returns the pause before the next
// retry, or backoff.Stop when the operation must give up, and Reset starts the
// schedule over as if the BackOff were new.
//
// Every policy built by this package also has a Validate() error method, which the
// client calls when the policy is configured. A policy with invalid arguments never
// panics: its BackOffs return backoff.Stop at once, so the first failure is final.
type RetryPolicy interface {
	NewBackOff() backoff.BackOff
}

// maxExponentialRetries caps the retry count of the exponential policies at Curator's
// limit, which keeps the random multiplier 2^(k+1) within 32-bit arithmetic.
const maxExponentialRetries = 29

// ExponentialBackoff returns Curator's ExponentialBackoffRetry: retry k (counting
// from 0) sleeps base × max(1, r), where r is uniform in [0, 2^(k+1)), so the pause
// is between base and base × (2^(k+1) − 1). The randomness spreads the retries of
// many clients that lost the same server, instead of having them all reconnect in
// the same instant. After maxRetries retries the BackOff stops; maxRetries above 29
// is treated as 29 (Curator's limit), where a single pause may already approach
// base × 2^29. A product that overflows time.Duration saturates at its maximum.
//
// Valid arguments: base > 0 and maxRetries ≥ 0 (0 means no retry at all).
func ExponentialBackoff(base time.Duration, maxRetries int) RetryPolicy {
	return &exponentialPolicy{name: "ExponentialBackoff", base: base, max: math.MaxInt64, maxRetries: maxRetries}
}

// BoundedExponentialBackoff is ExponentialBackoff with every pause capped at max,
// as Curator's BoundedExponentialBackoffRetry: the randomised growth still spreads
// clients, while a long outage does not push one pause to minutes or hours.
//
// Valid arguments: base > 0, max ≥ base and maxRetries ≥ 0.
func BoundedExponentialBackoff(base, max time.Duration, maxRetries int) RetryPolicy {
	return &exponentialPolicy{name: "BoundedExponentialBackoff", base: base, max: max, maxRetries: maxRetries, bounded: true}
}

// exponentialPolicy implements both exponential policies; bounded only changes what
// Validate demands of max.
type exponentialPolicy struct {
	name       string
	base, max  time.Duration
	maxRetries int
	bounded    bool
	// intN returns a uniform int in [0, n); nil means math/rand/v2's IntN, which is
	// safe for concurrent use. Tests set it to get a known schedule.
	intN func(n int) int
}

// Validate reports the first invalid argument, wrapping ErrInvalidRetryPolicy.
func (p *exponentialPolicy) Validate() error {
	switch {
	case p.base <= 0:
		return invalidPolicy(p.name, "base %v <= 0", p.base)
	case p.bounded && p.max < p.base:
		return invalidPolicy(p.name, "max %v < base %v", p.max, p.base)
	case p.maxRetries < 0:
		return invalidPolicy(p.name, "maxRetries %d < 0", p.maxRetries)
	}
	return nil
}

// NewBackOff returns a fresh schedule; see ExponentialBackoff.
func (p *exponentialPolicy) NewBackOff() backoff.BackOff {
	if p.Validate() != nil {
		return &backoff.StopBackOff{}
	}
	intN := p.intN
	if intN == nil {
		intN = rand.IntN
	}
	return &exponentialBackOff{
		base:       p.base,
		max:        p.max,
		maxRetries: min(p.maxRetries, maxExponentialRetries),
		intN:       intN,
	}
}

type exponentialBackOff struct {
	base, max  time.Duration
	maxRetries int
	intN       func(n int) int
	retries    int // retries handed out since the start or the last Reset
}

func (b *exponentialBackOff) NextBackOff() time.Duration {
	if b.retries >= b.maxRetries {
		return backoff.Stop
	}
	k := b.retries
	b.retries++
	m := time.Duration(max(1, b.intN(1<<(k+1))))
	if b.base > b.max/m { // base × m > max, computed without overflowing
		return b.max
	}
	return b.base * m
}

func (b *exponentialBackOff) Reset() { b.retries = 0 }

// RetryNTimes retries n times, pausing sleep before each retry, then stops; it is
// Curator's RetryNTimes. A fixed pause suits callers that know how long their outage
// lasts (a leader election, a restart); RetryNTimes(0, 0) never retries, which is
// the way to let the first connection error through unchanged.
//
// Valid arguments: n ≥ 0 and sleep ≥ 0 (0 retries at once).
func RetryNTimes(n int, sleep time.Duration) RetryPolicy {
	return &nTimesPolicy{name: "RetryNTimes", n: n, sleep: sleep}
}

// RetryOneTime retries once after sleep, then stops: RetryNTimes(1, sleep), kept as
// its own name because Curator has it and it reads better at the call site.
//
// Valid arguments: sleep ≥ 0.
func RetryOneTime(sleep time.Duration) RetryPolicy {
	return &nTimesPolicy{name: "RetryOneTime", n: 1, sleep: sleep}
}

type nTimesPolicy struct {
	name  string
	n     int
	sleep time.Duration
}

// Validate reports the first invalid argument, wrapping ErrInvalidRetryPolicy.
func (p *nTimesPolicy) Validate() error {
	switch {
	case p.n < 0:
		return invalidPolicy(p.name, "n %d < 0", p.n)
	case p.sleep < 0:
		return invalidPolicy(p.name, "sleep %v < 0", p.sleep)
	}
	return nil
}

// NewBackOff returns a fresh schedule; see RetryNTimes.
func (p *nTimesPolicy) NewBackOff() backoff.BackOff {
	if p.Validate() != nil {
		return &backoff.StopBackOff{}
	}
	return &nTimesBackOff{n: p.n, sleep: p.sleep}
}

type nTimesBackOff struct {
	n, retries int
	sleep      time.Duration
}

func (b *nTimesBackOff) NextBackOff() time.Duration {
	if b.retries >= b.n {
		return backoff.Stop
	}
	b.retries++
	return b.sleep
}

func (b *nTimesBackOff) Reset() { b.retries = 0 }

// RetryUntilElapsed retries with a constant pause of sleep for as long as the retry
// can start within maxElapsed of the BackOff's creation (or last Reset): NextBackOff
// returns sleep if elapsed + sleep ≤ maxElapsed, and backoff.Stop otherwise. So the
// last retry starts no later than maxElapsed after the first attempt, and a caller
// with a deadline can rely on it. Curator's RetryUntilElapsed checks the budget
// before sleeping and sleeps anyway, so its last retry may start up to one sleep
// past maxElapsed; this rule never overshoots. The time spent in the attempts
// themselves counts against the budget, since it is measured by the clock.
//
// Valid arguments: maxElapsed > 0 (a zero budget could allow nothing: use
// RetryNTimes(0, 0)) and sleep ≥ 0.
func RetryUntilElapsed(maxElapsed, sleep time.Duration) RetryPolicy {
	return &untilElapsedPolicy{maxElapsed: maxElapsed, sleep: sleep}
}

type untilElapsedPolicy struct {
	maxElapsed, sleep time.Duration
	// now returns the current time; nil means time.Now. Tests set a fake clock.
	now func() time.Time
}

// Validate reports the first invalid argument, wrapping ErrInvalidRetryPolicy.
func (p *untilElapsedPolicy) Validate() error {
	switch {
	case p.maxElapsed <= 0:
		return invalidPolicy("RetryUntilElapsed", "maxElapsed %v <= 0", p.maxElapsed)
	case p.sleep < 0:
		return invalidPolicy("RetryUntilElapsed", "sleep %v < 0", p.sleep)
	}
	return nil
}

// NewBackOff returns a fresh schedule whose budget starts now; see RetryUntilElapsed.
func (p *untilElapsedPolicy) NewBackOff() backoff.BackOff {
	if p.Validate() != nil {
		return &backoff.StopBackOff{}
	}
	now := p.now
	if now == nil {
		now = time.Now
	}
	return &untilElapsedBackOff{maxElapsed: p.maxElapsed, sleep: p.sleep, now: now, start: now()}
}

type untilElapsedBackOff struct {
	maxElapsed, sleep time.Duration
	now               func() time.Time
	start             time.Time
}

func (b *untilElapsedBackOff) NextBackOff() time.Duration {
	// elapsed+sleep > maxElapsed, rearranged so that a huge sleep cannot overflow.
	if b.now().Sub(b.start) > b.maxElapsed-b.sleep {
		return backoff.Stop
	}
	return b.sleep
}

func (b *untilElapsedBackOff) Reset() { b.start = b.now() }

// RetryForever retries without end, pausing sleep before each retry: Curator's
// RetryForever. It suits long-lived background work (a guaranteed delete, a
// leadership queue) that must outlive any outage and is stopped by its context or by
// closing the client, never by the policy.
//
// Valid arguments: sleep > 0, as Curator demands: with no pause, an unreachable
// ensemble would turn the retry loop into a busy loop that never ends.
func RetryForever(sleep time.Duration) RetryPolicy {
	return &foreverPolicy{sleep: sleep}
}

type foreverPolicy struct{ sleep time.Duration }

// Validate reports an invalid sleep, wrapping ErrInvalidRetryPolicy.
func (p *foreverPolicy) Validate() error {
	if p.sleep <= 0 {
		return invalidPolicy("RetryForever", "sleep %v <= 0", p.sleep)
	}
	return nil
}

// NewBackOff returns a constant schedule that never stops; see RetryForever.
func (p *foreverPolicy) NewBackOff() backoff.BackOff {
	if p.Validate() != nil {
		return &backoff.StopBackOff{}
	}
	return backoff.NewConstantBackOff(p.sleep)
}

func invalidPolicy(policy, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidRetryPolicy, policy, fmt.Sprintf(format, args...))
}

// IsRetryable reports whether err is a failure of the connection rather than of the
// request, so that the same request may succeed when sent again: the connection
// dropped (ErrConnectionClosed), no server could be reached (ErrNoServer), the
// session moved to another server (ErrSessionMoved), or the go-zookeeper connection
// was closed under the request (its ErrClosing: by our Close, which the client turns
// into ErrClosed, or when the client gives a session up for a new one). Wrapped
// errors count.
//
// A session expiry is deliberately not retryable: the session's ephemeral nodes,
// and with them any lock or leadership, are gone, so repeating the request blindly
// would be wrong; a recipe restarts its own step instead. Context errors are final
// too: the caller asked to stop. IsRetryable cannot tell a connection closed by the
// network from one closed by our own Close; the client checks that itself.
//
// go-zookeeper also hands a request the raw error of a failed socket write (a broken
// pipe, a reset, a deadline) when the connection dies under it: those are connection
// losses too.
func IsRetryable(err error) bool {
	var netErr *net.OpError
	return errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) ||
		errors.Is(err, zk.ErrClosing) ||
		errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, os.ErrDeadlineExceeded)
}
