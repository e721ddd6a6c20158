package counter

import (
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
)

// memory is the node as this client last read or wrote it, so that an Add can send
// its conditional write straight away, one request instead of a read and a write.
// The version alone keeps that exact: a write conditional on the remembered version
// applies only if the node is still at it, and then it still holds the remembered
// value. A stale memory costs a refused write and the read the Add would have sent
// anyway, so it is used only while it pays: trusted while its guesses win, and again
// once a read finds the node where this client left it, nobody having written since.
type memory struct {
	mu      sync.Mutex
	last    reading // stat nil: nothing remembered
	trusted bool
}

// guess is the remembered node, if it is worth a write without a read.
func (m *memory) guess() (reading, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.trusted && m.last.stat != nil
}

// read remembers a reading, and trusts the memory again when the reading shows that
// nobody wrote since the node this client remembers.
func (m *memory) read(r reading) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.stat == nil || r.stat.Czxid == 0 { // missing, or made by us unseen: nothing to guess from
		m.last, m.trusted = reading{}, false
		return
	}
	if m.last.stat != nil && sameVersion(m.last.stat, r.stat) {
		m.trusted = true
	}
	m.last = r
}

// wrote remembers the node as a write of ours left it.
func (m *memory) wrote(data []byte, v int64, stat *framework.Stat) {
	if stat == nil || stat.Czxid == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = reading{data: data, value: v, stat: stat}
}

// lost forgets a guess another writer beat, and stops guessing.
func (m *memory) lost() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.trusted = reading{}, false
}

func sameVersion(a, b *framework.Stat) bool {
	return b != nil && a.Czxid != 0 && a.Czxid == b.Czxid && a.Version == b.Version
}
