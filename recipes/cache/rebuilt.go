package cache

// When the client finds its ensemble rebuilt (framework.Rebuilt: replaced by a
// fresh one, or restored from an older copy), every zxid in the copy belongs to a
// history the ensemble no longer has: an answer of the new history cannot be
// compared with it (a node's czxid there may be lower than the copy's, which the
// copy would take for an older incarnation of it, a stale answer, and ignore for
// good). The cache starts afresh: it empties the copy (Deleted for every node,
// children first) and loads the new ensemble's tree (Created for every node), then
// says Synced.
//
// It looks before it applies any answer or notification, not only when its
// listener hears Rebuilt: the client moves its count of rebuilds before it lets a
// request run in the new history, whereas the listener may hear Rebuilt after the
// first answers have come.

// checkHistory starts the copy afresh if the client has found its ensemble rebuilt
// since the copy was last started.
func (en *engine) checkHistory() {
	n := en.c.ForRecipes().Rebuilds()
	if n == en.rebuilds || en.stopped {
		return
	}
	en.rebuilds = n
	en.log.Info("zkrecipes: the ensemble was rebuilt; the cache reads its tree afresh", "path", en.path)
	// Reads sent before are of either history: their answers are dropped and the
	// reads sent again (done).
	en.lostEpoch = en.epoch.Add(1)
	root := en.root
	en.store.mu.Lock()
	en.vanish(root)
	en.store.mu.Unlock()
	root.flags, root.listedAt = 0, 0
	en.syncing = true
	en.want(root, dataRead)
}
