package nodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

// backgroundPause is the pause between two tries of a delete that Close left to the
// background.
const backgroundPause = 200 * time.Millisecond

// place makes our node: at the path asked for the first time (protected and
// sequential if asked), then always at the same actual path. A node already there is
// taken over if it is ours, deleted if an earlier session of ours left it, and
// otherwise refused with ErrNodeExists.
func (p *PersistentNode) place(ctx context.Context) error {
	p.mu.Lock()
	target, data, gen := p.path, p.data, p.dataGen
	p.mu.Unlock()
	opts := []framework.CreateOption{framework.CreatingParentContainers()}
	if target == "" {
		target = p.base
		if p.o.protected {
			opts = append(opts, framework.Protected())
		}
		if p.o.sequential {
			opts = append(opts, framework.Sequential())
		}
	}
	if p.o.ephemeral {
		opts = append(opts, framework.Ephemeral())
	} else {
		// A persistent node does not say who made it. Anything made after this zxid
		// at our path, with our data, is taken for the node of our create whose
		// reply was lost.
		ok, parent, err := p.c.Exists(ctx, path.Dir(target))
		if err != nil {
			return err
		}
		since := int64(0)
		if ok {
			since = parent.Pzxid
		}
		p.mu.Lock()
		p.since, p.czxid, p.made = since, 0, false
		p.mu.Unlock()
	}
	if p.o.ttlSet {
		opts = append(opts, framework.TTL(p.o.ttl))
	}
	if p.o.readOnly {
		opts = append(opts, framework.WithNodePerms(framework.PermRead))
	}
	p.noteSession()
	created, err := p.c.Create(ctx, target, data, opts...)
	p.noteSession()
	switch {
	case err == nil:
		p.mu.Lock()
		p.path, p.written, p.made = created, gen, true
		p.mu.Unlock()
		return nil
	case errors.Is(err, framework.ErrNodeExists):
		return p.adopt(ctx, target, data, gen)
	}
	return err
}

// noteSession remembers the current session as one our ephemeral node may be made in.
func (p *PersistentNode) noteSession() {
	if sid := p.c.SessionID(); sid != 0 {
		p.mu.Lock()
		p.sessions[sid] = true
		p.mu.Unlock()
	}
}

// adopt decides about the node found at target when we meant to create it.
func (p *PersistentNode) adopt(ctx context.Context, target string, data []byte, gen uint64) error {
	existing, stat, err := p.c.Get(ctx, target)
	switch {
	case errors.Is(err, framework.ErrNoNode):
		return nil // gone meanwhile: the keeper tries again
	case err != nil:
		return err
	}
	if p.ours(stat, bytes.Equal(existing, data)) {
		p.mu.Lock()
		p.path, p.written = target, 0
		if bytes.Equal(existing, data) {
			p.written = gen
		}
		p.mu.Unlock()
		return nil
	}
	if p.o.ephemeral && p.ourSession(stat) { // not the current session's: see ours
		// Left by a session of ours that is ending: it is nobody's, and must not pass
		// for the node of the current session.
		p.c.ForRecipes().Logger().Info("zkrecipes: deleting a persistent node left by an earlier session", "path", target,
			"session", fmt.Sprintf("%#x", stat.EphemeralOwner))
		err := p.c.Delete(ctx, target, stat.Version)
		if err != nil && !errors.Is(err, framework.ErrNoNode) && !errors.Is(err, framework.ErrBadVersion) {
			return err
		}
		return nil
	}
	return fmt.Errorf("%w: %s %s", ErrNodeExists, target, describe(stat))
}

// ours says whether the node of stat is the one we made and keep: for an ephemeral
// node, one of the current session; for a persistent one, the one we made. A
// persistent node whose czxid we do not know yet is ours if it was made since our
// create was sent, and either that create succeeded or sameData (the node of a
// create whose reply was lost holds our data).
func (p *PersistentNode) ours(stat *framework.Stat, sameData bool) bool {
	if p.o.ephemeral {
		return stat.EphemeralOwner != 0 && stat.EphemeralOwner == p.c.SessionID()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case stat.EphemeralOwner != 0:
		return false
	case p.czxid != 0:
		return stat.Czxid == p.czxid
	case (p.made || sameData) && stat.Czxid > p.since:
		p.czxid = stat.Czxid
		return true
	}
	return false
}

// ourSession says whether the node of stat is an ephemeral node of a session our
// node was made in.
func (p *PersistentNode) ourSession(stat *framework.Stat) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return stat.EphemeralOwner != 0 && p.sessions[stat.EphemeralOwner]
}

func describe(stat *framework.Stat) string {
	if stat.EphemeralOwner != 0 {
		return fmt.Sprintf("is the ephemeral node of session %#x, another client's", stat.EphemeralOwner)
	}
	return fmt.Sprintf("is a persistent node made at %s (zxid %#x), not by this PersistentNode",
		time.UnixMilli(stat.Ctime).UTC().Format(time.RFC3339), stat.Czxid)
}

// remove deletes our node if it is still ours; when that cannot be done now, it goes
// on in the background while the node may still exist.
func (p *PersistentNode) remove(ctx context.Context) error {
	p.mu.Lock()
	target := p.path
	p.path, p.inPlace = "", false
	p.mu.Unlock()
	if target == "" {
		return nil
	}
	err := p.deleteOurs(ctx, target)
	if err == nil || !(framework.IsRetryable(err) || ctx.Err() != nil) {
		return err
	}
	go p.deleteLater(target)
	return fmt.Errorf("nodes: deleting %s: %w: %w", target, framework.ErrDeleteInBackground, err)
}

// deleteOurs deletes target if it is our node, whatever happened to its version.
func (p *PersistentNode) deleteOurs(ctx context.Context, target string) error {
	for {
		ok, stat, err := p.c.Exists(ctx, target)
		switch {
		case err != nil:
			return err
		case !ok:
			return nil
		case p.o.ephemeral && !p.ourSession(stat):
			return nil // not ours: our node went with its session
		case !p.o.ephemeral && !p.ours(stat, false):
			return nil
		}
		err = p.c.Delete(ctx, target, stat.Version)
		if err == nil || errors.Is(err, framework.ErrNoNode) {
			return nil
		}
		if !errors.Is(err, framework.ErrBadVersion) {
			return err
		}
	}
}

// deleteLater retries deleteOurs until it is done, the client closes, or (for an
// ephemeral node) a session that is not one of our node's has come: ours is gone
// with its session then. Unlike the client's guaranteed delete, it never deletes a
// node at our path that another client made meanwhile.
func (p *PersistentNode) deleteLater(target string) {
	ctx := p.c.ForRecipes().Context()
	for {
		if p.c.WaitConnected(ctx) != nil {
			return
		}
		p.mu.Lock()
		gone := p.o.ephemeral && !p.sessions[p.c.SessionID()]
		p.mu.Unlock()
		if gone {
			return
		}
		err := p.deleteOurs(ctx, target)
		if err == nil || !framework.IsRetryable(err) {
			return
		}
		t := time.NewTimer(backgroundPause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}
