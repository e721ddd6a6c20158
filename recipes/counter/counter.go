package counter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/zkrecipes/recipes/internal/nodewrite"
	"github.com/zkrecipes/zkrecipes/recipes/mutex"
)

// Result is what an Add did: the counter's value just before it and just after.
type Result struct{ Pre, Post int64 }

// Counter is a 64-bit counter in one persistent node: Curator's DistributedAtomicLong.
// Between calls it remembers only the node's version and value as it last saw them,
// to write without reading first while nobody else writes. It is safe for concurrent
// use.
type Counter struct {
	client   *framework.Client
	path     string
	node     nodewrite.Node
	retry    framework.RetryPolicy
	lockPath string
	memory   memory
	tel      telemetry
}

// New makes a counter at path. Nothing is sent to ZooKeeper until the first call;
// a missing node reads as 0 and is created, with container parents, by the first
// write.
func New(c *framework.Client, path string, opts ...Option) (*Counter, error) {
	o := options{retry: defaultRetry}
	if err := args.Check(c, path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := args.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if o.promoted && o.lockPath == path {
		return nil, fmt.Errorf("%w: PromotedToLock: the lock path %s is the counter's own", ErrInvalid, path)
	}
	return &Counter{client: c, path: path, node: nodewrite.New(c, path), retry: o.retry, lockPath: o.lockPath, tel: newTelemetry(c)}, nil
}

// Path is the counter's node.
func (c *Counter) Path() string { return c.path }

// Get reads the counter: 0 when its node does not exist yet. Like every ZooKeeper
// read it may lag behind a write another client has finished (never behind this
// client's own). It returns an error wrapping ErrBadData when the node does not
// hold 8 bytes, and ctx's error when ctx ends first.
func (c *Counter) Get(ctx context.Context) (int64, error) {
	r, err := c.read(ctx, false)
	if err != nil {
		return 0, err
	}
	return r.value, nil
}

// Add adds delta (which may be negative; overflow wraps, as Java's long does) with
// a conditional write, and reports the values just before and after it. A nil error
// means it was applied exactly once. When the connection drops after the write was
// sent, the write is sent again with the same version, so at most one of the two can
// apply; if the second is refused, a read decides: when it proves that another
// writer took the version, Add goes on trying, otherwise it returns an error wrapping
// ErrUnknownOutcome, never a guess and never a second add. When ctx ends while a
// write is in flight the error wraps both ErrUnknownOutcome and ctx's error; when it
// ends before, only ctx's error, and nothing was written. After the retry policy's
// tries (and, with PromotedToLock, those under the lock) all lost to other writers,
// it returns an error wrapping ErrGaveUp.
func (c *Counter) Add(ctx context.Context, delta int64) (Result, error) {
	call := c.tel.recipe.Call(ctx, opAdd, c.path)
	pre, post, _, err := c.update(ctx, fmt.Sprintf("add %d to", delta), func(v int64) (int64, bool) { return v + delta, true })
	call.End(c.tel.updates, outcome(false, err), err)
	if err != nil {
		return Result{}, err
	}
	return Result{Pre: pre, Post: post}, nil
}

// CompareAndSet sets the counter to v if it holds expect (a missing node holds 0),
// and reports whether it did. False means a read saw another value; a write that
// lost a race is tried again, while the value still equals expect. Errors are
// Add's: ErrUnknownOutcome, ErrGaveUp, ErrBadData, ctx's.
func (c *Counter) CompareAndSet(ctx context.Context, expect, v int64) (bool, error) {
	call := c.tel.recipe.Call(ctx, opCAS, c.path)
	_, _, wrote, err := c.update(ctx, fmt.Sprintf("compare %d and set %d at", expect, v), func(cur int64) (int64, bool) { return v, cur == expect })
	call.End(c.tel.updates, outcome(!wrote, err), err)
	return wrote, err
}

// Set writes v whatever the counter holds, in one unconditional write (Curator's
// forceSet), creating the node if it is missing. Like forceSet it reads nothing
// first, so it also overwrites a node that was not a counter. It is not sent twice:
// when the connection drops after it was sent, it returns an error wrapping
// ErrUnknownOutcome (and ctx's error when ctx ended while it was in flight). Called
// before its client's first session, it waits for one as the client's operations
// do: one connection timeout at most, unless the client was made
// WithRetryBeforeFirstConnection; when none comes in time, it returns an error
// wrapping the client's *framework.ConnectError (and framework.ErrNoServer), not
// ErrUnknownOutcome: nothing was sent.
func (c *Counter) Set(ctx context.Context, v int64) (err error) {
	call := c.tel.recipe.Call(ctx, opSet, c.path)
	defer func() { call.End(c.tel.updates, outcome(false, err), err) }()
	data := encode(v)
	where := fmt.Sprintf("set %s to %d", c.path, v)
	for created := false; ; created = true {
		stat, err := c.node.Once(ctx, data, -1)
		switch {
		case err == nil:
			c.memory.wrote(data, v, stat)
			return nil
		case errors.Is(err, framework.ErrNoNode) && !created:
			if _, err := c.create(ctx); err != nil {
				return fmt.Errorf("counter: %s: %w", where, err)
			}
			continue
		case nodewrite.MaybeApplied(err):
			return unknown(where, err)
		}
		return fmt.Errorf("counter: %s: %w", where, err)
	}
}

// reading is the counter's node as read: its value and stat.
type reading struct {
	data  []byte
	value int64
	stat  *framework.Stat
}

// read gets the node; a missing one reads as 0, and is created (at 0, which changes
// no one's view of the counter) when the caller is about to write. A reading for a
// write always has a version: a missing node's -1 would make the conditional write
// unconditional, and overwrite whatever another client made meanwhile.
func (c *Counter) read(ctx context.Context, forWrite bool) (reading, error) {
	data, stat, err := c.client.Get(ctx, c.path)
	switch {
	case errors.Is(err, framework.ErrNoNode) && forWrite:
		made, err := c.create(ctx)
		switch {
		case err != nil:
			return reading{}, fmt.Errorf("counter: %w", err)
		case made: // ours, so at version 0 (its czxid unknown: Create does not say)
			return reading{data: encode(0), stat: &framework.Stat{}}, nil
		}
		// Another client made it first; read it, and make it again if it was deleted
		// meanwhile (ctx bounds the rounds).
		return c.read(ctx, true)
	case errors.Is(err, framework.ErrNoNode):
		return reading{data: encode(0), stat: &framework.Stat{Version: -1}}, nil
	case err != nil:
		return reading{}, fmt.Errorf("counter: read %s: %w", c.path, err)
	}
	v, err := c.decode(data)
	if err != nil {
		return reading{}, err
	}
	r := reading{data: data, value: v, stat: stat}
	c.memory.read(r)
	return r, nil
}

// create makes the node at 0, and says whether this call made it. Repeating it is
// harmless, so a create retried after a lost reply, or one that another writer
// beat, is as good as ours.
func (c *Counter) create(ctx context.Context) (made bool, err error) {
	_, err = c.client.Create(ctx, c.path, encode(0), framework.CreatingParentContainers())
	if errors.Is(err, framework.ErrNodeExists) {
		return false, nil
	}
	return err == nil, err
}

// update runs the optimistic tries and, if they all lose and the counter is
// promoted to a lock, tries again under the lock. next says what to write given the
// current value, or false for nothing.
func (c *Counter) update(ctx context.Context, what string, next func(int64) (int64, bool)) (pre, post int64, wrote bool, err error) {
	pre, post, wrote, err = c.tries(ctx, what, next)
	if c.lockPath == "" || !errors.Is(err, ErrGaveUp) {
		return pre, post, wrote, err
	}
	c.tel.promotions.Add(1)
	m, err := mutex.New(c.client, c.lockPath)
	if err != nil {
		return 0, 0, false, fmt.Errorf("counter: %w", err)
	}
	if err := m.Acquire(ctx); err != nil {
		return 0, 0, false, fmt.Errorf("counter: %s %s: promoted to the lock %s: %w", what, c.path, c.lockPath, err)
	}
	defer func() {
		// The hold only keeps other promoted writers away; the version keeps the
		// count right, so a hold lost meanwhile changes nothing.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.client.SessionTimeout())
		defer cancel()
		_ = m.Release(rctx)
	}()
	return c.tries(ctx, what, next)
}

// tries reads and writes conditionally until a write applies, next declines, the
// retry policy gives up, or the outcome of a write cannot be known. A try that
// another writer beat waits for the policy's next pause (or ctx) and tries again.
func (c *Counter) tries(ctx context.Context, what string, next func(int64) (int64, bool)) (pre, post int64, wrote bool, err error) {
	where := what + " " + c.path
	var t attempt
	if r, ok := c.memory.guess(); ok {
		t.cur, t.guessed = &r, true
	}
	b := c.retry.NewBackOff()
	for {
		switch v, err := c.try(ctx, where, next, &t); {
		case err != nil:
			return 0, 0, false, err
		case v == finished:
			return t.pre, t.post, t.wrote, nil
		case v == retryNow:
			continue
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, false, fmt.Errorf("counter: %s: %w", where, err)
		}
		pause := b.NextBackOff()
		if pause == backoff.Stop {
			return 0, 0, false, fmt.Errorf("%w: %s", ErrGaveUp, where)
		}
		timer := time.NewTimer(pause)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return 0, 0, false, fmt.Errorf("counter: %s: %w", where, ctx.Err())
		}
	}
}

// attempt is what one update carries from a try to the next, and its result.
type attempt struct {
	cur       *reading // the node, when a resolving read has just given it
	guessed   bool     // cur is the memory's, not a read's
	pre, post int64
	wrote     bool
}

// verdict says what follows a try.
type verdict int

const (
	finished   verdict = iota // written, or next declined
	retryNow                  // the memory was stale: not a lost race, so read and try at once
	retryLater                // another writer came first: try again after a pause
)

// try reads the node unless t has it, and writes next's value at its version.
func (c *Counter) try(ctx context.Context, where string, next func(int64) (int64, bool), t *attempt) (verdict, error) {
	if t.cur == nil {
		r, err := c.read(ctx, true)
		if err != nil {
			return finished, err
		}
		t.cur = &r
	}
	v, ok := next(t.cur.value)
	switch {
	case !ok && t.guessed: // a remembered value declines nothing: read what it is now
		t.cur, t.guessed = nil, false
		return retryNow, nil
	case !ok:
		t.pre, t.post = t.cur.value, t.cur.value
		return finished, nil
	}
	data := encode(v)
	stat, sent, err := c.node.Conditional(ctx, data, t.cur.stat.Version)
	refused := errors.Is(err, framework.ErrBadVersion) || errors.Is(err, framework.ErrNoNode)
	switch {
	case err == nil:
		c.memory.wrote(data, v, stat)
		t.pre, t.post, t.wrote = t.cur.value, v, true
		return finished, nil
	case !sent && refused && t.guessed:
		c.memory.lost()
		t.cur, t.guessed = nil, false
		return retryNow, nil
	case !sent && refused:
		t.cur = nil // another writer came first: read again
		return retryLater, nil
	case sent && errors.Is(err, framework.ErrBadVersion):
		// Our first send may have applied and made the second stale, or another
		// writer took the version. The node's next version shows which, if
		// nobody wrote after it.
		r, rerr := c.read(ctx, false)
		if rerr != nil || !nodewrite.TookVersion(t.cur.stat, r.stat, r.data, data) {
			return finished, unknown(where, fmt.Errorf("resent after a lost reply, the write found the version moved on (%w); the node now: %s", err, describe(r, rerr)))
		}
		t.cur, t.guessed = &r, false
		return retryLater, nil
	case sent:
		return finished, unknown(where, err)
	}
	return finished, fmt.Errorf("counter: %s: %w", where, err)
}

func describe(r reading, err error) string {
	switch {
	case err != nil:
		return "unread: " + err.Error()
	case r.stat.Version < 0:
		return "missing"
	}
	return fmt.Sprintf("%d at version %d", r.value, r.stat.Version)
}

func unknown(where string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrUnknownOutcome, where, err)
}

func encode(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func (c *Counter) decode(data []byte) (int64, error) {
	if len(data) != 8 {
		return 0, fmt.Errorf("%w: %s holds %d bytes", ErrBadData, c.path, len(data))
	}
	return int64(binary.BigEndian.Uint64(data)), nil
}
