package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/framework"
)

var inspectCmd = &command{
	name:     "inspect",
	synopsis: "inspect PATH [--json] [--tree [--depth N]]",
	summary:  "list who holds and who waits at a lock, semaphore or election; who owns what in a partition; or sum up a subtree",
	help: `Lists the participants at PATH in queue order: node, id, session, age, fencing
token (the node's czxid) and whether it holds or waits. PATH may be any recipe's:
a mutex or leader selector (lock- nodes), a leader latch (latch-), a read/write
lock (read-/write-, or Curator's __READ__/__WRIT__) or a semaphore (PATH/leases,
PATH/locks), made by zkr, by zkrecipes or by Apache Curator. Children that are
not participants are left out.

Who holds: the first node of a mutex, selector or latch; in a read/write lock, a
writer that is first and every reader with no writer before it. ZooKeeper does
not store a semaphore's number of leases, so its lease nodes are shown as
holders, except one: while someone waits, the first of PATH/locks counts the
leases with a lease node of its own (its session's newest), shown as waiting.
The nodes in PATH/locks wait. (An acquirer that has just been granted its lease
may still show as waiting for a moment, until it leaves PATH/locks.)

The token shown is the node's czxid; a holder's ZKR_FENCING_TOKEN is at least
that (it is the zxid of the listing that granted the hold).

A partition's PATH (zkrecipes' partition.Partitioner: PATH/members, PATH/items)
lists its members, then each item with a lock queue: its owner (the holder of
PATH/items/ITEM), the owner's token and how many wait for it.

With --tree, PATH is any node: zkr loads its subtree (--depth levels of it) into a
cache, as a program following it with recipes/cache would hold it, and sums it up:
nodes, levels, bytes of data, ephemeral nodes, the last node changed, nodes an ACL
refused, and each child's share.`,
	example: "  zkr inspect /cron/backup\n  zkr inspect /cron/backup --json | jq -r '.participants[] | select(.state == \"holder\") | .id'\n  zkr inspect /config --tree --depth 2\n  zkr inspect /scheduler",
	exits:   "Exit codes:\n  0    listed (also when nobody takes part)\n  64   usage error\n  69   ZooKeeper unreachable, or a request failed\n",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		asJSON := fs.Bool("json", false, "print JSON for scripts, one object: {path, recipe, participants: [...]}, or with --tree the summary")
		tree := fs.Bool("tree", false, "sum up the subtree at PATH, loaded into a cache")
		depth := fs.Int("depth", -1, "with --tree, how many levels below PATH to load (default all)")
		return func(e *env, pos, argv []string, dash bool) int {
			if dash {
				return e.fail(usageError("inspect runs no command"))
			}
			if *tree {
				return inspectTree(e, pos, *depth, *asJSON)
			}
			p, err := pathArg(pos, nil, false, false)
			if err != nil {
				return e.fail(err)
			}
			return inspectWith(e, p, *asJSON, func(ctx context.Context, c *framework.Client) (finding, error) {
				return survey(ctx, c, p)
			})
		}
	},
}

// finding is what inspect found, printed for people or as JSON.
type finding interface{ print(e *env) }

// inspectWith connects, looks at p, and prints what it found.
func inspectWith(e *env, p string, asJSON bool, look func(context.Context, *framework.Client) (finding, error)) int {
	s, code := e.start()
	if s == nil {
		return code
	}
	defer s.close()
	ctx, stop := s.interruptible(context.Background())
	found, err := look(ctx, s.client)
	if sig := stop(); sig != 0 {
		return exitSignal + int(sig)
	}
	if err != nil {
		return s.fail(zkError("inspecting %s: %v", p, err))
	}
	if asJSON {
		out := json.NewEncoder(e.stdout)
		out.SetIndent("", "  ")
		_ = out.Encode(found)
	} else {
		found.print(e)
	}
	return exitOK
}

// inspectTree is inspect --tree.
func inspectTree(e *env, pos []string, depth int, asJSON bool) int {
	if len(pos) != 1 {
		return e.fail(usageError("want one PATH"))
	}
	if err := framework.ValidatePath(pos[0]); err != nil {
		return e.fail(usageError("invalid PATH %s", strings.TrimPrefix(err.Error(), framework.ErrInvalidPath.Error()+" ")))
	}
	return inspectWith(e, pos[0], asJSON, func(ctx context.Context, c *framework.Client) (finding, error) {
		return summarize(ctx, c, pos[0], depth)
	})
}

const (
	stateHolder  = "holder"
	stateWaiting = "waiting"
)

// queue is what survey finds at a path.
type queue struct {
	Path         string        `json:"path"`
	Recipe       string        `json:"recipe"` // mutex, rwlock, semaphore, latch, leases, partition; "" when nobody takes part
	Participants []participant `json:"participants"`
	// A partition's members and items, in name order.
	Members []string        `json:"members,omitempty"`
	Items   []partitionItem `json:"items,omitempty"`
}

// partitionItem is one item of a partition, as its lock queue shows it.
type partitionItem struct {
	Name         string `json:"name"`
	Owner        string `json:"owner"` // the holder's id, "" while nobody holds
	FencingToken int64  `json:"fencing_token"`
	Waiting      int    `json:"waiting"`
}

// participant is one node of the queue.
type participant struct {
	Node         string    `json:"node"`    // its path
	ID           string    `json:"id"`      // its data: the participant id
	Session      string    `json:"session"` // its ephemeral owner, in hex
	Created      time.Time `json:"created"`
	AgeSeconds   float64   `json:"age_seconds"`
	FencingToken int64     `json:"fencing_token"` // czxid
	Kind         string    `json:"kind"`          // lock, latch, read, write, lease
	State        string    `json:"state"`         // holder or waiting
	session      int64     // the owner as a number: one process's nodes share it
}

// kinds are the participant names of every recipe, Curator's and ours. A node's
// sequence is the text after the last occurrence of its name.
var kinds = []struct{ name, kind string }{
	{"__READ__", "read"}, {"__WRIT__", "write"}, {"read-", "read"}, {"write-", "write"},
	{"lock-", "lock"}, {"latch-", "latch"}, {"lease-", "lease"},
}

// member is a participant's node name, before survey reads it.
type member struct{ name, kind, seq string }

// classify tells a participant's kind and sequence from its node name, or false for
// a foreign child. The sequence must be ZooKeeper's: at least ten digits, a 32-bit
// number (negative after the counter wraps).
func classify(child string) (member, bool) {
	for _, k := range kinds {
		i := strings.LastIndex(child, k.name)
		if i < 0 {
			continue
		}
		seq := child[i+len(k.name):]
		if len(seq) < 10 || seq[0] == '+' {
			continue
		}
		if _, err := strconv.ParseInt(seq, 10, 32); err == nil {
			return member{child, k.kind, seq}, true
		}
	}
	return member{}, false
}

// sortMembers orders participants by sequence, comparing the texts as Curator does,
// so that we agree with Go and Java participants on the queue. Stable: a read node
// may share its write node's sequence.
func sortMembers(ms []member) {
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.seq, b.seq) })
}

// survey lists the participants at p in queue order, whichever recipe made them.
func survey(ctx context.Context, c *framework.Client, p string) (*queue, error) {
	q := &queue{Path: p, Participants: []participant{}}
	children, err := listChildren(ctx, c, p)
	if err != nil {
		return nil, err
	}
	if slices.Contains(children, "members") && slices.Contains(children, "items") {
		return surveyPartition(ctx, c, q)
	}
	if slices.Contains(children, "leases") || slices.Contains(children, "locks") {
		// A semaphore: PATH/leases holds the leases, PATH/locks queues who waits
		// for one.
		q.Recipe = "semaphore"
		leases, err := readDir(ctx, c, path.Join(p, "leases"), "lease")
		if err != nil {
			return nil, err
		}
		locks, err := readDir(ctx, c, path.Join(p, "locks"), "lock")
		if err != nil {
			return nil, err
		}
		// The first of the lock queue counts the leases with a lease node of its own,
		// created after every lease it already holds: that node waits.
		counting := -1
		for i := range leases {
			leases[i].State = stateHolder
			if len(locks) > 0 && leases[i].session == locks[0].session {
				counting = i
			}
		}
		if counting >= 0 {
			leases[counting].State = stateWaiting
		}
		for i := range locks {
			locks[i].State = stateWaiting
		}
		q.Participants = append(append(q.Participants, leases...), locks...)
		return q, nil
	}

	// One recipe per path: a read/write lock, else a mutex or selector, else a latch,
	// else a semaphore's leases directory inspected on its own.
	var ms []member
	for _, family := range []struct {
		recipe string
		kinds  []string
	}{
		{"rwlock", []string{"read", "write"}}, {"mutex", []string{"lock"}},
		{"latch", []string{"latch"}}, {"leases", []string{"lease"}},
	} {
		if ms = members(children, family.kinds...); len(ms) > 0 {
			q.Recipe = family.recipe
			break
		}
	}
	ps, err := read(ctx, c, p, ms)
	if err != nil {
		return nil, err
	}
	// The rules run on the nodes that still exist: one that left while we listed
	// has passed its place on.
	writerBefore := false
	for i := range ps {
		var holds bool
		switch ps[i].Kind {
		case "read":
			holds = !writerBefore
		case "write":
			holds = i == 0
			writerBefore = true
		case "lease":
			holds = true
		default: // lock, latch
			holds = i == 0
		}
		ps[i].State = stateWaiting
		if holds {
			ps[i].State = stateHolder
		}
	}
	q.Participants = append(q.Participants, ps...)
	return q, nil
}

// surveyPartition lists a partition's members, and each item's owner: the holder
// of its lock, PATH/items/ITEM.
func surveyPartition(ctx context.Context, c *framework.Client, q *queue) (*queue, error) {
	q.Recipe = "partition"
	members, err := listChildren(ctx, c, path.Join(q.Path, "members"))
	if err != nil {
		return nil, err
	}
	q.Members = slices.Sorted(slices.Values(members))
	items, err := listChildren(ctx, c, path.Join(q.Path, "items"))
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(slices.Values(items)) {
		ps, err := readDir(ctx, c, path.Join(q.Path, "items", name), "lock")
		if err != nil {
			return nil, err
		}
		it := partitionItem{Name: name}
		if len(ps) > 0 {
			it.Owner, it.FencingToken, it.Waiting = ps[0].ID, ps[0].FencingToken, len(ps)-1
		}
		q.Items = append(q.Items, it)
	}
	return q, nil
}

// readDir reads the participants of one kind under dir, in queue order.
func readDir(ctx context.Context, c *framework.Client, dir, kind string) ([]participant, error) {
	names, err := listChildren(ctx, c, dir)
	if err != nil {
		return nil, err
	}
	return read(ctx, c, dir, members(names, kind))
}

func listChildren(ctx context.Context, c *framework.Client, p string) ([]string, error) {
	names, _, err := c.Children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) { // an idle lock's container parent is deleted
		return nil, nil
	}
	return names, err
}

// members keeps the children of the given kinds, in queue order.
func members(children []string, kinds ...string) []member {
	var ms []member
	for _, child := range children {
		if m, ok := classify(child); ok && slices.Contains(kinds, m.kind) {
			ms = append(ms, m)
		}
	}
	sortMembers(ms)
	return ms
}

// read reads each member's node under dir: its id and stat. A node that left while
// we listed is left out.
func read(ctx context.Context, c *framework.Client, dir string, ms []member) ([]participant, error) {
	now := time.Now()
	ps := []participant{}
	for _, m := range ms {
		node := path.Join(dir, m.name)
		data, st, err := c.Get(ctx, node)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		created := time.UnixMilli(st.Ctime)
		ps = append(ps, participant{
			Node: node, ID: string(data), Session: fmt.Sprintf("%#x", st.EphemeralOwner),
			Created: created.UTC(), AgeSeconds: max(0, now.Sub(created).Round(time.Millisecond).Seconds()),
			FencingToken: st.Czxid, Kind: m.kind, session: st.EphemeralOwner,
		})
	}
	return ps, nil
}

func (q *queue) print(e *env) {
	if q.Recipe == "partition" {
		q.printPartition(e)
		return
	}
	if len(q.Participants) == 0 {
		fmt.Fprintf(e.stdout, "%s: no participants\n", q.Path)
		return
	}
	fmt.Fprintf(e.stdout, "%s: %s, %d participants\n", q.Path, q.Recipe, len(q.Participants))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSTATE\tKIND\tID\tSESSION\tAGE\tTOKEN\tNODE")
	for i, p := range q.Participants {
		rel := strings.TrimPrefix(p.Node, strings.TrimSuffix(q.Path, "/")+"/")
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", i+1, p.State, p.Kind, p.ID, p.Session,
			age(time.Duration(p.AgeSeconds*float64(time.Second))), p.FencingToken, rel)
	}
	_ = tw.Flush()
}

func (q *queue) printPartition(e *env) {
	fmt.Fprintf(e.stdout, "%s: partition, %d members (%s), %d items with an owner or a queue\n",
		q.Path, len(q.Members), strings.Join(q.Members, ", "), len(q.Items))
	if len(q.Items) == 0 {
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tOWNER\tTOKEN\tWAITING")
	for _, it := range q.Items {
		owner := it.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", it.Name, owner, it.FencingToken, it.Waiting)
	}
	_ = tw.Flush()
}

// age is a duration to the second, for people.
func age(d time.Duration) string {
	return d.Round(time.Second).String()
}
