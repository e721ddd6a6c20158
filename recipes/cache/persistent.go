package cache

import (
	"context"
	"errors"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Following the tree on one persistent watch, CuratorCache's design, where the
// server has them (ZooKeeper 3.6 and later): one recursive watch on the path (a
// persistent one for Depth(0)) tells the cache of every creation, change and
// deletion below it, in the server's order, and the reads set no watch.
//
//   - A created node is read once (its data), and a changed one once; a deleted one
//     is taken out of the copy with its subtree, with no read. A node created below
//     the path needs no listing of its parent, and its own children come as their
//     own creations, so it is not listed either: only the nodes the first load or a
//     Reset finds are listed.
//   - A read sent before a deletion was heard may answer with the node as it was:
//     such an answer is dropped and the node read again, so a deleted node never
//     comes back.
//   - A node whose creation is heard before its parent has been read waits for its
//     parent: no child is told before its parent.
//   - After any connection loss the watch is set again and says so (Reset): the
//     cache reads every node again and reports only the differences, then Synced.
//     After a session loss it first Syncs, as on one-shot watches.
//
// A server without persistent watches, or a client made WithOneShotWatches, makes
// the cache follow the tree with one-shot watches (watches.go).

// watchMode is the persistent watch that follows what the cache keeps.
func (en *engine) watchMode() framework.WatchMode {
	if en.o.depth == 0 {
		return framework.WatchPersistent
	}
	return framework.WatchPersistentRecursive
}

// follow sets the cache's persistent watch, or reports that the server has none
// (then the cache sets one-shot watches). It runs before the first read, so that a
// change after any read is heard.
func (en *engine) follow(ctx context.Context) (*framework.PersistentWatch, error) {
	w, err := en.c.ForRecipes().AddWatchFunc(ctx, en.c, en.path, en.watchMode(), en.heardChange)
	switch {
	case errors.Is(err, framework.ErrPersistentWatchUnsupported):
		return nil, nil
	case err != nil:
		return nil, err
	}
	en.persistent = true
	return w, nil
}

// heardChange takes an event of the persistent watch from go-zookeeper's goroutine
// to the loop.
func (en *engine) heardChange(ev framework.WatchEvent) {
	en.inbox.Push(func() { en.changed(ev) })
}

// changed applies an event of the persistent watch, on the loop.
func (en *engine) changed(ev framework.WatchEvent) {
	if en.stopped {
		return
	}
	en.checkHistory()
	if ev.Reset {
		en.resync()
		return
	}
	parent, e := en.store.find(ev.Path)
	switch ev.Type {
	case framework.EventNodeDataChanged:
		if e != nil {
			en.refresh(e, dataRead)
		}
	case framework.EventNodeCreated:
		en.childChanged(parent, ev, 1)
		if e == nil {
			e = en.born(parent, ev.Path)
		}
		if e != nil {
			e.mark(absent, false)
			en.refresh(e, dataRead)
		}
	case framework.EventNodeDeleted:
		en.childChanged(parent, ev, -1)
		if e != nil {
			en.deleted(e)
		}
	}
}

// childChanged keeps the child fields of the stat of a created or deleted node's
// parent as the server changed them, with no read: a creation or a deletion adds one
// to Cversion (the server shows creations and deletions counted, DataNode.copyStat),
// and one to or from NumChildren, and sets Pzxid to the change's zxid. A server that sends no zxid with
// its notifications (3.8) has the parent's stat read instead. parent is nil when
// the tree does not have it (or ev is the root's, whose parent is not in the copy).
func (en *engine) childChanged(parent *entry, ev framework.WatchEvent, children int32) {
	switch {
	case parent == nil:
		return
	case !parent.live || ev.Zxid == 0:
		// A read in flight may have been answered before the change: read after it.
		en.refresh(parent, dataRead)
		return
	case ev.Zxid < parent.stat.Pzxid || (ev.Zxid == parent.stat.Pzxid && !parent.is(childEvent)):
		return // the copy's stat was read after the change
	}
	en.store.mu.Lock()
	defer en.store.mu.Unlock()
	s := &parent.stat
	s.NumChildren += children
	s.Cversion++
	s.Pzxid = ev.Zxid
	parent.mark(childEvent, true)
}

// born makes the entry of a node created below a node the cache follows, parent (nil
// if the tree does not have it), or returns nil if the cache does not keep it (too
// deep, not selected, or its parent is not kept).
func (en *engine) born(parent *entry, p string) *entry {
	if parent == nil || parent.is(removed) || parent.is(refused) || !en.follows(parent) {
		return nil
	}
	if en.o.selector != nil && !en.o.selector(p) {
		return nil
	}
	en.store.mu.Lock()
	defer en.store.mu.Unlock()
	kid := parent.add(p)
	kid.mark(born, true)
	return kid
}

// deleted takes e and its subtree out of the copy, with no read. A read of e in
// flight may answer with e as it was before: it is dropped, and e read again.
func (en *engine) deleted(e *entry) {
	for k := range e.reads {
		if e.reads[k].is(pending) {
			e.reads[k].mark(stale, true)
		}
	}
	en.store.mu.Lock()
	defer en.store.mu.Unlock()
	if e == en.root {
		en.vanish(e)
		e.mark(absent, true)
		return
	}
	en.remove(e)
}

// bornKidsOf reads again the kids of e that were created, and heard of, while e was
// not yet in the copy: they waited for e (gotData).
func (en *engine) bornKidsOf(e *entry) {
	for _, name := range sortedKeys(e.kids) {
		if kid := e.kids[name]; kid.is(born) && !kid.live && !kid.reads[dataRead].is(pending) {
			en.dispatch(kid, dataRead)
		}
	}
}
