package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

// watchRedraw is how often a terminal's view is worked out and drawn again without
// a change, so that its ages move.
const watchRedraw = time.Second

// watchDepth is how deep --watch caches PATH: a partition's lock nodes are
// PATH/items/ITEM/lock-N; a group's members PATH/ID; a value is PATH itself.
func watchDepth(as string) int {
	switch as {
	case asGroup:
		return 1
	case asValue, asCount, asCounter:
		return 0
	}
	return 3
}

// watcher gathers what the cache tells, for the loop that shows it: whether the
// copy changed, and the connection's events in order.
type watcher struct {
	mu    sync.Mutex
	dirty bool
	conn  []cache.Event // Suspended, Lost, Synced, Error
	wake  chan struct{}
}

// hear is the cache's listener: it never blocks.
func (w *watcher) hear(ev cache.Event) {
	w.mu.Lock()
	switch ev.Type {
	case cache.Suspended, cache.Lost, cache.Synced, cache.Error:
		w.conn = append(w.conn, ev)
	}
	w.dirty = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) take() (dirty bool, conn []cache.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dirty, conn = w.dirty, w.conn
	w.dirty, w.conn = false, nil
	return dirty, conn
}

// watchLine is one line of --watch --json.
type watchLine struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"` // change, suspended, lost, synced, error
	View  view      `json:"view,omitempty"`
	Error string    `json:"error,omitempty"`
}

// connNotes are what a connection event means for the view, for people.
var connNotes = map[cache.EventType]string{
	cache.Suspended: "connection suspended: the view may be stale until synced",
	cache.Lost:      "session lost: ZooKeeper ended our session; reading everything again in a new one",
	cache.Synced:    "synced: the view is current again",
}

// inspectWatch is inspect --watch: it follows p through a cache until a signal, or
// until watchFor when it is positive.
func inspectWatch(e *env, p, as string, asJSON bool, watchFor time.Duration) int {
	out := &watchOutput{env: e, path: p, json: asJSON}
	if f, ok := e.stdout.(*os.File); ok && !asJSON {
		out.tty = isTerminal(f)
	}
	var redraw <-chan time.Time
	if out.tty {
		t := time.NewTicker(watchRedraw)
		defer t.Stop()
		redraw = t.C
	}
	return follow(e, p, watchDepth(as), watchFor, redraw, func(ctx context.Context, ca *cache.Cache, _ bool, conn []cache.Event, ticked bool) {
		v, err := look(ctx, participants.FromCache(ca), p, as)
		if ticked { // the ages move
			if err == nil && out.fault == "" {
				out.shown = v
			}
			out.redraw()
			return
		}
		for _, ev := range conn {
			out.connection(ev)
		}
		out.show(v, err)
	})
}

// follow starts a session and a cache of p, depth levels down, with a context that
// ends on a signal or after watchFor when it is positive, and calls show each time
// the copy (dirty) or the connection (conn) changed, and each time tick fires
// (ticked), until that context ends.
func follow(e *env, p string, depth int, watchFor time.Duration, tick <-chan time.Time,
	show func(ctx context.Context, ca *cache.Cache, dirty bool, conn []cache.Event, ticked bool)) int {
	s, code := e.start()
	if s == nil {
		return code
	}
	defer s.close()
	ctx, stop := s.interruptible(context.Background())
	defer stop()
	if watchFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, watchFor)
		defer cancel()
	}
	ca, err := cache.New(s.client, p, cache.Depth(depth))
	if err != nil {
		return s.fail(usageError("%v", err))
	}
	defer ca.Close(context.Background()) // the cache only reads: its reads end with it
	w := &watcher{wake: make(chan struct{}, 1)}
	ca.Listen(w.hear)
	if err := ca.Start(ctx); err != nil {
		if ctx.Err() != nil { // a signal or --for, before the copy was loaded
			return exitOK
		}
		return s.fail(zkError("watching %s: %v", p, err))
	}
	for {
		if dirty, conn := w.take(); dirty || len(conn) > 0 {
			show(ctx, ca, dirty, conn, false)
		}
		select {
		case <-ctx.Done():
			return exitOK
		case <-w.wake:
		case <-tick:
			show(ctx, ca, false, nil, true)
		}
	}
}

// watchOutput shows --watch's views and events: redrawn in place on a terminal,
// else one line each (JSON with --json).
type watchOutput struct {
	*env
	path      string
	json, tty bool
	last      string // the summary last shown, to show changes only
	shown     view   // the terminal's view
	status    string // the terminal's connection note
	fault     string // the terminal's note of a view that could not be read
}

func (o *watchOutput) connection(ev cache.Event) {
	note := connNotes[ev.Type]
	if ev.Type == cache.Error {
		note = printable(fmt.Sprintf("cannot read %s: %v", ev.Path, ev.Err))
	}
	switch {
	case o.json:
		line := watchLine{Time: time.Now().UTC(), Event: jsonEvent(ev.Type)}
		if ev.Err != nil {
			line.Error = note
		}
		o.emit(line)
	case o.tty:
		o.status = note
		if ev.Type == cache.Synced {
			o.status = ""
		}
	default:
		fmt.Fprintf(o.stdout, "%s %s: %s\n", stamp(time.Now()), o.path, note)
	}
}

func jsonEvent(t cache.EventType) string {
	switch t {
	case cache.Suspended:
		return "suspended"
	case cache.Lost:
		return "lost"
	case cache.Synced:
		return "synced"
	}
	return "error"
}

// show shows v if it differs from what was last shown. An error is a view of its
// own: a count whose node now holds another length says so, and the watch goes on.
func (o *watchOutput) show(v view, err error) {
	summary := ""
	if err != nil {
		summary = fmt.Sprintf("%s: %v", o.path, err)
		var ee *exitError
		if errors.As(err, &ee) {
			summary = ee.msg
		}
	} else {
		summary = v.summary()
	}
	summary = printable(summary) // an error may quote data too
	if summary == o.last {
		return
	}
	o.last = summary
	switch {
	case o.json && err != nil:
		o.emit(watchLine{Time: time.Now().UTC(), Event: "error", Error: summary})
	case o.json:
		o.emit(watchLine{Time: time.Now().UTC(), Event: "change", View: v})
	case o.tty:
		o.shown, o.fault = v, ""
		if err != nil {
			o.shown, o.fault = nil, summary
		}
		o.redraw()
	default:
		fmt.Fprintf(o.stdout, "%s %s\n", stamp(time.Now()), summary)
	}
}

func (o *watchOutput) emit(line watchLine) {
	data, _ := json.Marshal(line) // the views are plain data
	fmt.Fprintf(o.stdout, "%s\n", escapeJSON(data))
}

// redraw draws the terminal's view again from the top of the screen, as watch(1)
// does, so that lines wrapped by a narrow terminal leave nothing behind.
func (o *watchOutput) redraw() {
	if !o.tty {
		return
	}
	fmt.Fprint(o.stdout, "\033[H\033[2J")
	fmt.Fprintf(o.stdout, "zkr inspect --watch %s    %s    (Ctrl-C ends)\n", o.path, time.Now().Format(time.TimeOnly))
	for _, note := range []string{o.status, o.fault} {
		if note != "" {
			fmt.Fprintf(o.stdout, "%s\n", note)
		}
	}
	fmt.Fprintln(o.stdout)
	if o.shown != nil {
		o.shown.print(o.env)
	}
}

// stamp is a line's time: UTC, to the millisecond.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
