package wire

import (
	"math/bits"
	"sync/atomic"
)

// A contended lock's waiter lists the queue twice a grant: with 32 waiters, those
// two replies' bodies were 4 KB of the 17 KB ours allocated an acquisition, where
// zk.Lock reads into go-zookeeper's one buffer (BenchmarkContendedAcquisition/off-32,
// 2026-12-06). So a body of middling size is read into the connection's spare buffer
// when it has one, which the reply gives back once decoded (Reply.Done: every
// decoder copies what it returns). One spare a connection, and none larger than
// maxSpareBody: a pool of them kept as many as replies had been read ahead of their
// callers, 10 KB a waiter with 1,000 queued, where a queued waiter costs 1.4 KB.
type spareBody struct {
	p atomic.Pointer[[]byte]
}

const (
	smallBody    = 256      // allocated as it comes: a create's, a read's of a lock node
	maxSpareBody = 16 << 10 // a listing of some 250 lock nodes
)

// body is a buffer of n bytes for a reply's body, and the buffer to give back to
// the spare once the reply is decoded (nil: none). Its bytes are not zeroed where
// it is the spare: the reply is read over them.
func (s *spareBody) body(n int) ([]byte, *[]byte) {
	if n <= smallBody || n > maxSpareBody {
		return make([]byte, n), nil
	}
	if p := s.p.Swap(nil); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return *p, p
	}
	// None, or one too small, which is dropped: the next is a power of two, so that
	// a listing a little longer than the last still fits.
	b := make([]byte, n, 1<<bits.Len(uint(n-1)))
	return b, &b
}

// Done gives the reply's buffer back to its connection's spare, if it is from there
// and the spare is free. Call it once the reply is decoded, once, and use neither the
// reply nor its Body after it; a reply never done is only garbage.
func (r Reply) Done() {
	if r.buf != nil {
		r.spare.p.CompareAndSwap(nil, r.buf)
	}
}
