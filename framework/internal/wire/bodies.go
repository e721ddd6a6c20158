package wire

import (
	"math/bits"
	"sync"
)

// The bodies of the replies to the framework's own requests are read into buffers
// that go back to a pool once their reply is decoded (Reply.Done), since every
// decoder copies what it returns. A contended lock's waiter lists the queue twice a
// grant: with 32 waiters, those two bodies were 4 KB of the 17 KB ours allocated an
// acquisition, where zk.Lock reads into go-zookeeper's one buffer
// (BenchmarkContendedAcquisition/off-32, 2026-12-06).
var bodies sync.Pool // of *[]byte

const (
	minPooledBody = 1 << 10
	maxPooledBody = 64 << 10 // a larger body (a large node's data) is not kept for another
)

// newBody is a buffer of n bytes for a reply's body: the pool's, if the one it gives
// is large enough. Its bytes are not zeroed: the reply is read over them.
func newBody(n int) *[]byte {
	if n > maxPooledBody {
		b := make([]byte, n)
		return &b
	}
	if p, ok := bodies.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	// None, or one too small, which is dropped (a lock's listings, its largest
	// bodies, come once or twice a grant, and its small replies fit in 1 KB).
	b := make([]byte, n, max(minPooledBody, 1<<bits.Len(uint(n-1))))
	return &b
}

// Done gives the reply's buffer back for another reply's body. Call it once the
// reply is decoded, once, and use neither the reply nor its Body after it; a reply
// never done is only garbage.
func (r Reply) Done() {
	if r.buf != nil && cap(*r.buf) <= maxPooledBody {
		bodies.Put(r.buf)
	}
}
