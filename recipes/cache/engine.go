package cache

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/notify"
	"github.com/zkrecipes/zkrecipes/recipes/internal/lifecycle"
)

// maxReads is how many reads the cache has in flight at most, each on a goroutine of
// its own while it lasts (go-zookeeper's requests block their caller): enough to
// load a wide tree at the speed of the connection rather than of round trips, few
// enough to leave room for the client's other work.
const maxReads = 32

// engine keeps the copy converging: it sends the reads, hears the watches and the
// connection's states, and applies what it learns to the store. Its methods run on
// its loop (reads.go), one at a time, except where their docs say otherwise (the
// readers, heard, wait).
type engine struct {
	c     *framework.Client
	path  string
	o     options
	log   *slog.Logger
	store *store // the copy it changes, under the store's mu

	// The loop's own state: touched only on the loop's goroutine.
	root       *entry
	epoch      atomic.Int32 // moves on Suspended and Lost; readers read it
	lostEpoch  int32        // the epoch the last Lost began
	rebuilds   int64        // the client's count of rebuilt ensembles when the copy was started (rebuilt.go)
	unsettled  int          // reads needed before the copy is complete (Initialized, Synced)
	syncing    bool         // Initialized or Synced is due once unsettled is 0
	ready      bool         // Initialized was emitted
	holding    bool         // after Lost: reads wait for a Sync of the new session
	holdingNow atomic.Bool  // holding, for the readers
	held       []task
	failed     []failure // reads that failed on a connection error, to send again
	retry      *time.Timer
	retryArmed bool
	stopped    bool // the client closed: no more reads
	persistent bool // one persistent watch follows the tree (persistent.go); set before the loop starts
	tel        *telemetry

	inbox   *notify.Queue[func()] // work for the loop
	readers readers               // the goroutines sending reads
	ctx     context.Context       // ends at Close
	running sync.WaitGroup        // the loop and the readers
	halted  chan struct{}         // closed once the client has closed and Stopped is emitted
}

// readers are the goroutines sending the cache's reads (see send).
type readers struct {
	mu      sync.Mutex
	queue   []task // reads waiting for a reader
	running int
}

// load begins the first load of the copy, on the loop.
func (en *engine) load() {
	en.rebuilds = en.c.ForRecipes().Rebuilds()
	en.syncing = true
	en.want(en.root, dataRead)
}

// clientClosed stops the cache for good once its client has closed, on the loop: no
// read can succeed any more. Stopped is the last event; the loop ends after it.
func (en *engine) clientClosed() {
	en.stopped = true
	en.say(Event{Type: Stopped, Err: lifecycle.ClientClosed(en.c, "cache: "+en.path+" stopped")})
	en.store.listeners.End()
	close(en.halted)
}

// emit queues ev for the listeners; the store's mu is held.
func (en *engine) emit(ev Event) {
	en.tel.emitted(ev)
	en.store.push(ev)
}

// wait waits for the loop and the readers to end, once ctx has ended, and stops
// the retry timer.
func (en *engine) wait() {
	en.running.Wait()
	if en.retry != nil {
		en.retry.Stop()
	}
}
