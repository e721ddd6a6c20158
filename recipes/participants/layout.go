package participants

import (
	"math"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lockqueue"
)

// Layout is how a recipe names its nodes under its path and decides who holds.
type Layout struct {
	recipe string
	names  []string // the node names, as the recipe's lock queue lists them
	kinds  []string // the kind of each name
	rule   lockqueue.Rule
}

// The layouts of the lock-like recipes, Curator's node names.
var (
	// Mutex is an exclusive lock's: mutex.Mutex, election.Selector, semaphore.Mutex,
	// a semaphore's PATH/locks and a partition's item locks (Curator's
	// InterProcessMutex, LeaderSelector). The first node holds.
	Mutex = Layout{"mutex", []string{"lock-"}, []string{"lock"}, lockqueue.Exclusive}
	// Latch is election.Latch's (Curator's LeaderLatch): the first node leads.
	Latch = Layout{"latch", []string{"latch-"}, []string{"latch"}, lockqueue.Exclusive}
	// RWLock is rwlock.RWLock's with its default names, read- and write-: a writer
	// holds when it is first, a reader when no writer is before it.
	RWLock = rwLayout("read-", "write-")
	// CuratorRWLock is rwlock.RWLock's with rwlock.WithCuratorNames (Curator's
	// InterProcessReadWriteLock): __READ__ and __WRIT__.
	CuratorRWLock = rwLayout("__READ__", "__WRIT__")
)

func rwLayout(read, write string) Layout {
	return Layout{"rwlock", []string{read, write}, []string{"read", "write"}, lockqueue.ReadWrite(write)}
}

// Leases is the layout of a counting semaphore's PATH/leases with n leases
// (semaphore.Semaphore, Curator's InterProcessSemaphoreV2): the first n lease nodes
// hold. ZooKeeper does not store n; for n < 1, meaning it is unknown, every lease
// node counts as holding (ReadSemaphore then tells the one still counting).
func Leases(n int) Layout {
	if n < 1 {
		n = math.MaxInt
	}
	return Layout{"leases", []string{"lease-"}, []string{"lease"}, lockqueue.Leases(n)}
}

// Recipe names the layout's recipe: mutex, latch, rwlock or leases.
func (l Layout) Recipe() string { return l.recipe }

// Participant is one node of a recipe's queue.
type Participant struct {
	Name  string // the node's name, the last segment of Path
	Kind  string // lock, latch, read, write or lease: the name it was made with
	Holds bool   // whether the recipe's rule lets it hold (a latch's: lead)
	// Read fills in the rest; Order leaves them empty.
	Path string
	ID   string         // the node's data: the participant's id
	Stat framework.Stat // the node's stat: Czxid, Ctime, EphemeralOwner (its session)
}

// Order returns the participants among children, a listing of the recipe's path, in
// queue order, and whether each holds. Children that are not the layout's nodes (a
// foreign node, a sequence the server would not write) take no part, as in the
// recipe. Sequences compare round the counter's wrap, as the recipe's queue does.
func Order(children []string, l Layout) []Participant {
	sorted, holds := lockqueue.Order(children, l.names, l.rule)
	ps := make([]Participant, len(sorted))
	for i, name := range sorted {
		ps[i] = Participant{Name: name, Kind: l.kind(name), Holds: holds[i]}
	}
	return ps
}

// kind is the kind of a participant's node: that of the name its sequence follows.
func (l Layout) kind(child string) string {
	for i := range l.names {
		if _, ok := lockqueue.Sequence(child, l.names[i:i+1]); ok {
			return l.kinds[i]
		}
	}
	return ""
}

// Detect tells which layout a listing is: the first of CuratorRWLock, RWLock,
// Mutex, Latch and Leases (n unknown) that one of children belongs to; false when
// none does (no participant, or not a recipe's path).
func Detect(children []string) (Layout, bool) {
	for _, l := range []Layout{CuratorRWLock, RWLock, Mutex, Latch, Leases(0)} {
		for _, c := range children {
			if _, ok := lockqueue.Sequence(c, l.names); ok {
				return l, true
			}
		}
	}
	return Layout{}, false
}
