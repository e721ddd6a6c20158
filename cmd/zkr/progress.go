package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

const (
	progressFirst = time.Second     // no line for a hold granted at once
	progressTTY   = time.Second     // a terminal's line is redrawn this often
	progressPlain = 5 * time.Second // elsewhere (cron mail, logs) a line this often
	surveyTimeout = 5 * time.Second
)

// progress shows on stderr, while a session waits, who holds what it waits for, for
// how long, and how many wait ahead of us: one line redrawn in place on a terminal,
// else a plain line every few seconds. stop ends it and clears the line.
func (s *session) progress(ctx context.Context, w waitFor) (stop func()) {
	if s.quiet {
		return func() {}
	}
	tty := false
	if f, ok := s.stderr.(*os.File); ok {
		tty = isTerminal(f)
	}
	every := progressPlain
	if tty {
		every = progressTTY
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	shown := false
	go func() {
		defer close(done)
		t := time.NewTimer(progressFirst)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if line, ok := s.describe(ctx, w); ok {
				if tty {
					fmt.Fprintf(s.stderr, "\r\033[K%s", line)
				} else {
					fmt.Fprintln(s.stderr, line)
				}
				shown = true
			}
			t.Reset(every)
		}
	}()
	return func() {
		cancel()
		<-done
		if tty && shown {
			fmt.Fprint(s.stderr, "\r\033[K")
		}
	}
}

// describe is one progress line. Our own nodes are those of our session: we cannot
// know their names before the recipe hands them over. Those ahead are counted by
// session, so that a semaphore's counting waiter, with a lease node and a lock
// node, counts once.
func (s *session) describe(ctx context.Context, w waitFor) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, surveyTimeout)
	defer cancel()
	q, err := survey(ctx, participants.FromClient(s.client), w.path)
	if err != nil {
		s.log.Debug("zkr: progress", "error", err)
		return "", false
	}
	ours := s.client.SessionID()
	var holders []participant
	ahead := map[int64]bool{}
	passedOurs := false
	for _, p := range q.Participants {
		switch {
		case p.session == ours:
			passedOurs = true
		case p.holds():
			holders = append(holders, p)
		case !passedOurs:
			ahead[p.session] = true
		}
	}
	line := fmt.Sprintf("%s: waiting for %v: ", s.cmd, w)
	switch len(holders) {
	case 0:
		line += "nobody holds it"
	case 1:
		line += fmt.Sprintf("held by %s (joined %s ago)", printable(holders[0].ID), joined(holders[0]))
	default:
		line += fmt.Sprintf("held by %s (joined %s ago) and %d more", printable(holders[0].ID), joined(holders[0]), len(holders)-1)
	}
	return line + fmt.Sprintf(", %d ahead of us", len(ahead)), true
}

// joined is how long ago a participant's node was created: for a holder, an upper
// bound of how long it has held.
func joined(p participant) string { return age(time.Duration(p.AgeSeconds * float64(time.Second))) }
