package discovery

import (
	"sync"
	"time"
)

// downs is Curator's DownInstanceManager: an instance that had errors errors
// (NoteError) within forget of its first one is down until forget has passed since
// that first error; then its count starts again.
type downs struct {
	errors int
	forget time.Duration
	now    func() time.Time // time.Now; a fake clock in tests

	mu    sync.Mutex
	marks map[string]mark // by instance id
}

type mark struct {
	since  time.Time
	errors int
}

func newDowns(errors int, forget time.Duration) *downs {
	return &downs{errors: errors, forget: forget, now: time.Now, marks: map[string]mark{}}
}

func (d *downs) note(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.marks[id]
	if !ok || d.now().Sub(m.since) >= d.forget {
		m = mark{since: d.now()}
	}
	m.errors++
	d.marks[id] = m
}

// down says whether the instance is down now, and forgets the marks that expired.
func (d *downs) down(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.marks[id]
	if ok && d.now().Sub(m.since) >= d.forget {
		delete(d.marks, id)
		return false
	}
	return ok && m.errors >= d.errors
}
