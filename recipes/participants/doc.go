// Package participants reads who takes part in a lock-like recipe, in queue order,
// and who holds, as the recipe itself decides: a mutex or leader selector, a leader
// latch, a read/write lock (zkrecipes' names or Curator's), a semaphore's leases.
// It is the one reader that tools share (zkr inspect, its --watch mode, a web view):
// the order and the rules are the lock queue's own (recipes/internal/lockqueue),
// called, never copied, so a tool can never name another holder than the one the
// library granted, not even after the server's sequence counter wraps past 2^31.
//
// Order is the pure part: from a listing of child names and a Layout, the
// participants in order with their kind and whether they hold. Read does the same
// over a Reader (a client with FromClient, or a cache's copy with FromCache) and adds
// each node's id and stat; ReadSemaphore reads a counting semaphore's two
// directories. Detect tells the layout of a listing.
//
// A recipe's own Participants method (mutex.Mutex.Participants, ...) answers the
// same question for a participant that knows its recipe; this package is for a
// reader that knows only a path.
package participants
