package cache

import (
	"slices"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// entry is a node the cache knows of: in the copy (live) or not yet, or no longer.
// Its data, stat, kids and live are the copy's, and change under the store's mu
// (the engine changes them; any goroutine reads them); the rest belongs to the
// loop. There is one per cached node, so it keeps no copy of its path in a Node,
// its name is its path's end, its depth is counted up its parents (follows), and
// its yes/no facts are bits: 144 bytes, the allocator's 144-byte size class, where
// it was 168 in the 176-byte one (TestEntrySize keeps it there).
type entry struct {
	path   string
	parent *entry
	data   []byte            // the node's, while live: Node without its Path, which is path
	stat   framework.Stat    // the node's, while live
	kids   map[string]*entry // by name: the only map that holds the entry (store.find)
	// needEpoch[k] is the epoch the read of kind k must be sent in, or later, while
	// it is needed (readState's need).
	needEpoch [2]int32
	// listedAt is the cversion of the node's last listing applied (TrustReadOnly).
	listedAt int32
	live     bool       // in the copy
	flags    entryFlags // the loop's: never in the same byte as live, which readers read
	reads    [2]readState
}

// entryFlags are an entry's yes/no facts but live, a bit each, as readState's are:
// as bools, they took 18 bytes of every cached node's entry; as bits, 3. They
// change on the loop without the store's mu, so live, which the copy's readers read,
// is a byte of its own.
type entryFlags uint8

const (
	removed entryFlags = 1 << iota // no longer in the tree: its reads' results are dropped
	absent                         // the root is missing: its data read is an existence check
	refused                        // an ACL refused a read: it is not read again
	fixed                          // TrustReadOnly: its ACL lets no one change its data; no data watch
	born                           // its creation was heard (persistent.go): its children come as events, unlisted
	// childEvent: the child fields of stat were last moved by a child's creation or
	// deletion heard (persistent.go), not read: another of the same zxid (a multi)
	// is not in them yet.
	childEvent
)

// is says whether e has f.
func (e *entry) is(f entryFlags) bool { return e.flags&f != 0 }

// mark gives e f, or takes it away.
func (e *entry) mark(f entryFlags, on bool) { setBits(&e.flags, f, on) }

// setBits sets the bits f of *s when on, and clears them otherwise: entryFlags' and
// readState's.
func setBits[T ~uint8](s *T, f T, on bool) {
	if on {
		*s |= f
	} else {
		*s &^= f
	}
}

// copy is the node as the copy has it.
func (e *entry) copy() Node { return Node{Path: e.path, Data: e.data, Stat: e.stat} }

// set puts n in e; n.Path is e.path.
func (e *entry) set(n Node) { e.data, e.stat = n.Data, n.Stat }

// name is the last element of e's path.
func (e *entry) name() string { return e.path[strings.LastIndexByte(e.path, '/')+1:] }

// add makes the entry of e's child at p, in e's kids; the store's mu is held.
func (e *entry) add(p string) *entry {
	kid := &entry{path: p, parent: e}
	if e.kids == nil {
		e.kids = map[string]*entry{}
	}
	e.kids[kid.name()] = kid
	return kid
}

// each calls fn with e and every entry below it, parents before their kids; fn
// must not add or remove any. It runs on the loop, or under the store's mu.
func (e *entry) each(fn func(*entry)) {
	fn(e)
	for _, kid := range e.kids {
		kid.each(fn)
	}
}

// readKind is what a read of a node fetches, and what its watch watches.
type readKind int

const (
	dataRead  readKind = iota // the data (with a data watch), or for a missing root its existence
	childRead                 // the children's names (with a child watch)
	syncRead                  // a Sync of the path after a session loss, before any other read
)

// readState tracks one kind of read of one node, a bit a fact (as entryFlags, to
// keep the entry small; the epoch of need is the entry's needEpoch). A node has at
// most one read of a kind in flight, so results apply in order; a change seen
// meanwhile asks for another read after it.
type readState uint8

const (
	armed       readState = 1 << iota // a watch set by our reads is on the server, not fired yet
	firedDuring                       // a notification came while a read was pending: it sets no armed
	pending                           // a read is queued or in flight
	again                             // read again when it returns: a watch fired meanwhile
	stale                             // its answer is dropped and the read sent again: the node was deleted meanwhile
	need                              // counted in unsettled: the copy is not complete without this read
)

// is says whether s has f.
func (s readState) is(f readState) bool { return s&f != 0 }

// mark gives s f, or takes it away.
func (s *readState) mark(f readState, on bool) { setBits(s, f, on) }

// follows reports whether the cache reads e's children: whether e is less than
// Depth levels below the path. The levels are counted up e's parents, at most
// Depth of them, rather than kept in every entry: trees are a few levels deep.
func (en *engine) follows(e *entry) bool {
	depth := 0
	for p := e.parent; p != nil && depth < en.o.depth; p = p.parent {
		depth++
	}
	return depth < en.o.depth
}

// gotData applies the result of a data read of e: its data, or that it is missing.
// It returns false when the result tells nothing yet (a missing root that still
// needs its existence checked).
func (en *engine) gotData(e *entry, t task, r result) (answered bool) {
	switch {
	case r.same:
		return true // still the read-only node the copy has
	case t.probe && r.stat != nil:
		e.mark(absent, false) // created meanwhile: read it
		en.dispatch(e, dataRead)
		return false
	case t.probe:
		return true // missing, and watched for its creation
	case r.stat == nil: // no node
		en.store.mu.Lock()
		was := e.live
		en.vanish(e)
		en.store.mu.Unlock()
		switch {
		case e == en.root:
			e.mark(absent, true)
			en.dispatch(e, dataRead)
			return false
		case was && !e.parent.reads[childRead].is(pending):
			// A listing of the parent made before our read may have shown a node of
			// the same name created after it; read once more to know.
			en.dispatch(e, dataRead)
			return false
		}
		return true
	}
	data := r.data
	if en.o.noData {
		data = nil
	}
	n := Node{Path: e.path, Data: data, Stat: *r.stat}
	en.store.mu.Lock()
	defer en.store.mu.Unlock()
	defer e.readChildFields(r.stat.Pzxid)
	old := e.copy()
	switch {
	case e.live && n.Stat.Czxid == old.Stat.Czxid && n.Stat.Mzxid > old.Stat.Mzxid:
		n.Stat = childFields(n.Stat, old.Stat)
		e.set(n)
		if n.Stat.Version != old.Stat.Version {
			en.emit(Event{Type: Changed, Path: e.path, Old: old, New: n})
		}
		return true
	case e.live && n.Stat.Czxid == old.Stat.Czxid:
		e.stat = childFields(old.Stat, n.Stat)
		return true
	case e.live && n.Stat.Czxid < old.Stat.Czxid:
		return false // an older incarnation: a stale answer; the watch it set will fire
	}
	// A node seen for the first time, or deleted and created again since the last
	// read: what was in the copy is gone. (Kids of a node not yet in the copy are
	// kept: on a persistent watch they were heard being made, and wait for it.)
	if e.live || !en.persistent {
		en.vanish(e)
	}
	if en.persistent && e.parent != nil && !e.parent.live {
		return true // its parent's creation is read first, which reads e again
	}
	if !en.persistent && e.parent != nil && n.Stat.Czxid > e.parent.stat.Pzxid {
		// Created after the parent's children were last listed, so perhaps under a
		// later incarnation of the parent: the listing its watch brings decides.
		return true
	}
	e.mark(fixed, r.fixed)
	en.appear(e, n)
	return true
}

// appear puts e in the copy as n, and asks for its children. The store's mu is
// held.
func (en *engine) appear(e *entry, n Node) {
	e.set(n)
	e.live = true
	en.store.live++
	en.emit(Event{Type: Created, Path: e.path, New: n})
	if en.follows(e) && !e.is(born) {
		en.want(e, childRead)
	}
	if en.persistent {
		en.bornKidsOf(e)
	}
}

// gotChildren applies a listing of e's children: new names become entries to read,
// names gone take their subtree out of the copy.
func (en *engine) gotChildren(e *entry, r result) (answered bool) {
	if !e.live || r.stat == nil {
		// Not in the copy, or gone: the data read, armed or pending while e is live,
		// says what happened.
		return true
	}
	if r.stat.Czxid != e.stat.Czxid {
		if r.stat.Czxid < e.stat.Czxid {
			e.reads[childRead].mark(again, true) // a listing of an older incarnation
		}
		// A newer incarnation: the data read will see it, and list it again.
		return false
	}
	en.store.mu.Lock()
	defer en.store.mu.Unlock()
	e.stat = childFields(e.stat, *r.stat)
	e.readChildFields(r.stat.Pzxid)
	listed := make(map[string]bool, len(r.names))
	for _, name := range r.names {
		listed[name] = true
	}
	// Children made or deleted that the names show. Counting one too few costs a
	// needless check; one too many would hide a node made again, so a kid kept
	// below is not counted.
	changes := 0
	for _, name := range sortedKeys(e.kids) {
		kid := e.kids[name]
		// A kid created after the listing was made is not in it, and stays.
		if !listed[name] && en.unlisted(kid, r.stat.Pzxid) {
			en.remove(kid)
			changes++
		}
	}
	slices.Sort(r.names)
	for _, name := range r.names {
		if kid := e.kids[name]; kid != nil {
			if !kid.live && !kid.is(refused) && !kid.reads[dataRead].is(pending) {
				en.want(kid, dataRead) // missing when last read, listed now
			}
			continue
		}
		p := join(e.path, name)
		if en.o.selector != nil && !en.o.selector(p) {
			continue
		}
		kid := e.add(p)
		en.want(kid, dataRead)
		changes++
	}
	en.recheckFixed(e, r.stat.Cversion, changes)
	return true
}

// unlisted says whether a kid a listing whose pzxid is pzxid does not show is gone.
// On one-shot watches a kid not yet read is gone too: a child watch will tell of its
// coming back. On a persistent watch its creation may have been heard after the
// listing was made: its read decides, and its deletion will be heard.
func (en *engine) unlisted(kid *entry, pzxid int64) bool {
	if !kid.live {
		return !en.persistent
	}
	return kid.stat.Czxid <= pzxid
}

// recheckFixed reads again the read-only kids of e, which have no data watch to say
// that they were deleted and made again, when the listing's cversion has grown by
// more than the changes its names show: ZooKeeper adds one to it for each child made
// and each deleted, so a kid deleted and made again between two listings shows
// there only. The check's stat tells the kid's incarnations apart (gotData).
func (en *engine) recheckFixed(e *entry, cversion int32, changes int) {
	last := e.listedAt
	e.listedAt = cversion
	if !en.o.trustReadOnly || int(cversion-last) <= changes {
		return
	}
	for _, name := range sortedKeys(e.kids) {
		if kid := e.kids[name]; kid.is(fixed) && kid.live {
			en.refresh(kid, dataRead)
		}
	}
}

// vanish takes e's subtree and e out of the copy, children first, and forgets e's
// children. The store's mu is held.
func (en *engine) vanish(e *entry) {
	for _, name := range sortedKeys(e.kids) {
		en.remove(e.kids[name])
	}
	if e.live {
		e.live = false
		en.store.live--
		en.emit(Event{Type: Deleted, Path: e.path, Old: e.copy()})
	}
	e.set(Node{})
	e.mark(fixed, false)
	en.settled(e, childRead) // a node out of the copy has no children to list
}

// remove takes a node below the root out of the tree. The store's mu is held.
func (en *engine) remove(e *entry) {
	en.vanish(e)
	delete(e.parent.kids, e.name())
	e.mark(removed, true)
	en.settled(e, dataRead)
}

// settled marks e's read of kind k as no longer needed for a complete copy.
func (en *engine) settled(e *entry, k readKind) {
	if rs := &e.reads[k]; rs.is(need) {
		rs.mark(need, false)
		en.unsettled--
	}
}

// readChildFields notes a read of e whose stat's Pzxid is pzxid: if the copy's is
// the same, its child fields include every change of that zxid (a transaction is
// read whole or not at all).
func (e *entry) readChildFields(pzxid int64) {
	if e.stat.Pzxid == pzxid {
		e.mark(childEvent, false)
	}
}

// childFields is s with the child fields (Cversion, NumChildren, Pzxid) of from, if
// from saw a later child change: a later Pzxid, which every creation and deletion of
// a child moves (a deletion leaves Cversion as it is). A listing moves only these:
// its data fields may be newer than the data the copy holds, and must wait for the
// data read.
func childFields(s, from framework.Stat) framework.Stat {
	if from.Pzxid > s.Pzxid {
		s.Cversion, s.NumChildren, s.Pzxid = from.Cversion, from.NumChildren, from.Pzxid
	}
	return s
}

func sortedKeys(m map[string]*entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func join(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
