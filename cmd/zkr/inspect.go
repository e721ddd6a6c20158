package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

var inspectCmd = &command{
	name:     "inspect",
	synopsis: "inspect PATH [--json] [--as group|value|count|counter] [--watch [--for D]] [--tree [--depth N]]",
	summary:  "show who holds and who waits at a lock, semaphore or election; a partition, group, shared value or counter; or sum up a subtree; once or live",
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

A PATH with no lock queue is shown by its layout, Curator's: children that are
all ephemeral leaves are a group's members (GroupMember, zkrecipes' group), id
and payload; a node without children holds a value. A value's length alone says
what it probably is: 4 bytes a shared count (SharedCount, a big-endian int), 8 a
counter (DistributedAtomicLong, a big-endian long), else a shared value
(SharedValue, any bytes), and inspect says when it told the recipe by length. A
shared value of 4 or 8 bytes looks the same: --as names the recipe instead, and
a count or counter of the wrong length is then an error (exit code 65). An empty
node without children (an idle lock's parent, an empty group) shows as no
participants; a node with children that are none of these is said to be no
recipe's, with its stat (zkr ls lists its children). A PATH with no node is an
error (exit code 66), except with --watch, which shows "no such node" until
one appears. A lock's parent is a container node, which ZooKeeper deletes a
while after its last participant left: an idle lock may have no node.

With --watch, inspect follows PATH through a cache (recipes/cache) and shows each
change, as it happens, of who holds, who waits, who leads, the members, the items
or the value: on a terminal the view is redrawn in place; piped, one line per
change, each stamped with the time, and lines for the connection (suspended,
session lost, synced). It ends on SIGINT, SIGTERM or SIGHUP, or after --for.

With --tree, PATH is any node: zkr loads its subtree (--depth levels of it) into a
cache, as a program following it with recipes/cache would hold it, and sums it up:
nodes, levels, bytes of data, ephemeral nodes, the last node changed, nodes an ACL
refused, and each child's share.`,
	example: "  zkr inspect /cron/backup\n  zkr inspect /cron/backup --json | jq -r '.participants[] | select(.state == \"holder\") | .id'\n" +
		"  zkr inspect /config --tree --depth 2\n  zkr inspect /scheduler\n  zkr inspect /workers\n  zkr inspect /jobs/next-id --as counter\n" +
		"  zkr inspect /cron/backup --watch\n  zkr inspect /workers --watch --json | jq -c '.view.members'",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		asJSON := fs.Bool("json", false, "print JSON for scripts, one object: {path, recipe, ...}, or with --tree the summary; with --watch one object a line: {time, event, view}")
		as := fs.String("as", "", "read PATH as a `group|value|count|counter`, whatever its layout suggests")
		watch := fs.Bool("watch", false, "follow PATH and show each change seen until SIGINT or SIGTERM")
		watchFor := fs.Duration("for", 0, "with --watch, stop after this `duration` (default: until a signal)")
		tree := fs.Bool("tree", false, "sum up the subtree at PATH, loaded into a cache")
		depth := fs.Int("depth", -1, "with --tree, how many levels below PATH to load (default all)")
		return func(e *env, pos, argv []string, dash bool) int {
			switch {
			case dash:
				return e.fail(usageError("inspect runs no command"))
			case *as != "" && !slices.Contains(asViews, *as):
				return e.fail(usageError("--as wants one of %s, not %q", strings.Join(asViews, ", "), *as))
			case *tree && (*as != "" || *watch):
				return e.fail(usageError("--tree goes with neither --as nor --watch"))
			case *watchFor != 0 && !*watch:
				return e.fail(usageError("--for goes with --watch"))
			case *watchFor < 0:
				return e.fail(usageError("--for cannot be negative"))
			case *tree:
				return inspectTree(e, pos, *depth, *asJSON)
			}
			p, err := pathArg(pos, nil, false, false)
			if err != nil {
				return e.fail(err)
			}
			if *watch {
				return inspectWatch(e, p, *as, *asJSON, *watchFor)
			}
			return inspectWith(e, p, *asJSON, func(ctx context.Context, c *framework.Client) (finding, error) {
				return look(ctx, participants.FromClient(c), p, *as)
			})
		}
	},
}

// finding is what inspect found, printed for people or as JSON.
type finding interface{ print(e *env) }

// inspectWith connects, looks at p, and prints what it found: a missing p is an
// error (lookAt).
func inspectWith(e *env, p string, asJSON bool, look func(context.Context, *framework.Client) (finding, error)) int {
	return showWith(e, p, asJSON, func(ctx context.Context, c *framework.Client) (finding, error) {
		return lookAt(ctx, c, p, look)
	})
}

// showWith connects, calls look, and prints what it found; what names the thing
// looked at in an error.
func showWith(e *env, what string, asJSON bool, look func(context.Context, *framework.Client) (finding, error)) int {
	return runOp(e, func(ctx context.Context, c *framework.Client) error {
		found, err := look(ctx, c)
		var ee *exitError
		switch {
		case errors.As(err, &ee):
			return err
		case err != nil:
			return zkError("inspecting %s: %v", what, err)
		case asJSON:
			e.printJSON(found)
		default:
			found.print(e)
		}
		return nil
	})
}

// lookAt looks at p once it knows there is a node there: a missing node is an
// error (exit code 66), for a typo must not pass for an idle lock. (An idle lock's
// parent, a container, is deleted too, a minute or so after its last participant:
// --watch follows a path whether or not it exists.)
func lookAt(ctx context.Context, c *framework.Client, p string, look func(context.Context, *framework.Client) (finding, error)) (finding, error) {
	ok, _, err := c.Exists(ctx, p)
	switch {
	case err != nil:
		return nil, nodeError(p, err)
	case !ok:
		return nil, nodeError(p, framework.ErrNoNode)
	}
	return look(ctx, c)
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

// A participant's state: a latch's holder leads.
const (
	stateHolder  = "holder"
	stateLeader  = "leader"
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
	State        string    `json:"state"`         // holder (a latch's: leader) or waiting
	session      int64     // the owner as a number: one process's nodes share it
}

func (p participant) holds() bool { return p.State != stateWaiting }

// survey lists the participants at p in queue order, whichever recipe made them,
// with the holders as that recipe decides (recipes/participants).
func survey(ctx context.Context, r participants.Reader, p string) (*queue, error) {
	children, err := r.Children(ctx, p)
	if err != nil {
		return nil, err
	}
	return surveyOf(ctx, r, p, children)
}

// surveyOf is survey of p's listing children.
func surveyOf(ctx context.Context, r participants.Reader, p string, children []string) (*queue, error) {
	q := &queue{Path: p, Participants: []participant{}}
	if slices.Contains(children, "members") && slices.Contains(children, "items") {
		return surveyPartition(ctx, r, q)
	}
	var ps []participants.Participant
	sem, err := isSemaphore(ctx, r, p, children)
	if err != nil {
		return nil, err
	}
	if layout, ok := participants.Detect(children); sem {
		q.Recipe = "semaphore"
		ps, err = participants.ReadSemaphore(ctx, r, p, 0) // ZooKeeper does not store the number of leases
	} else if ok {
		q.Recipe = layout.Recipe()
		ps, err = participants.Read(ctx, r, p, layout)
	}
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, x := range ps {
		q.Participants = append(q.Participants, newParticipant(x, q.Recipe, now))
	}
	return q, nil
}

// isSemaphore tells whether children, p's listing, are a counting semaphore's
// directories (PATH/leases, PATH/locks) and nothing else, each empty or holding
// that recipe's nodes: a folder of locks named locks (/app/locks/report) does not
// make its parent (/app) a semaphore.
func isSemaphore(ctx context.Context, r participants.Reader, p string, children []string) (bool, error) {
	if !participants.IsSemaphore(children) {
		return false, nil
	}
	for _, c := range children {
		if c != "leases" && c != "locks" {
			return false, nil
		}
		names, err := r.Children(ctx, path.Join(p, c))
		switch {
		case errors.Is(err, framework.ErrNoNode): // gone while we listed
			continue
		case err != nil:
			return false, err
		}
		if _, ok := participants.Detect(names); len(names) > 0 && !ok {
			return false, nil
		}
	}
	return true, nil
}

func newParticipant(x participants.Participant, recipe string, now time.Time) participant {
	state := stateWaiting
	switch {
	case x.Holds && recipe == "latch":
		state = stateLeader
	case x.Holds:
		state = stateHolder
	}
	created := time.UnixMilli(x.Stat.Ctime)
	return participant{
		Node: x.Path, ID: x.ID, Session: fmt.Sprintf("%#x", x.Stat.EphemeralOwner),
		Created: created.UTC(), AgeSeconds: max(0, now.Sub(created).Round(time.Millisecond).Seconds()),
		FencingToken: x.Stat.Czxid, Kind: x.Kind, State: state, session: x.Stat.EphemeralOwner,
	}
}

// surveyPartition lists a partition's members, and each item's owner: the holder
// of its lock, PATH/items/ITEM.
func surveyPartition(ctx context.Context, r participants.Reader, q *queue) (*queue, error) {
	q.Recipe = "partition"
	members, err := r.Children(ctx, path.Join(q.Path, "members"))
	if err != nil {
		return nil, err
	}
	q.Members = slices.Sorted(slices.Values(members))
	items, err := r.Children(ctx, path.Join(q.Path, "items"))
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(slices.Values(items)) {
		ps, err := participants.Read(ctx, r, path.Join(q.Path, "items", name), participants.Mutex)
		if err != nil {
			return nil, err
		}
		it := partitionItem{Name: name}
		if len(ps) > 0 && ps[0].Holds {
			it.Owner, it.FencingToken, it.Waiting = ps[0].ID, ps[0].Stat.Czxid, len(ps)-1
		}
		q.Items = append(q.Items, it)
	}
	return q, nil
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", i+1, p.State, p.Kind, printable(p.ID), p.Session,
			age(time.Duration(p.AgeSeconds*float64(time.Second))), p.FencingToken, printable(rel))
	}
	_ = tw.Flush()
}

func (q *queue) printPartition(e *env) {
	fmt.Fprintf(e.stdout, "%s: partition, %d members (%s), %d items with an owner or a queue\n",
		q.Path, len(q.Members), printable(strings.Join(q.Members, ", ")), len(q.Items))
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", printable(it.Name), printable(owner), it.FencingToken, it.Waiting)
	}
	_ = tw.Flush()
}

// age is a duration to the second, for people.
func age(d time.Duration) string {
	return d.Round(time.Second).String()
}

// summary is the queue on one line, for --watch: who holds (with tokens) and who
// waits, in queue order.
func (q *queue) summary() string { return printable(q.line()) }

func (q *queue) line() string {
	if q.Recipe == "partition" {
		items := make([]string, len(q.Items))
		for i, it := range q.Items {
			owner := it.Owner
			if owner == "" {
				owner = "-"
			}
			items[i] = fmt.Sprintf("%s %s (token %d, %d waiting)", it.Name, owner, it.FencingToken, it.Waiting)
		}
		return fmt.Sprintf("%s: partition, members %s; items %s", q.Path, strings.Join(q.Members, ", "), strings.Join(items, ", "))
	}
	if len(q.Participants) == 0 {
		return q.Path + ": no participants"
	}
	var holding, waiting []string
	for _, p := range q.Participants {
		if p.holds() {
			holding = append(holding, fmt.Sprintf("%s %s (token %d)", p.Kind, p.ID, p.FencingToken))
		} else {
			waiting = append(waiting, fmt.Sprintf("%s %s", p.Kind, p.ID))
		}
	}
	return fmt.Sprintf("%s: %s, holding: %s; waiting: %s", q.Path, q.Recipe, orNone(holding), orNone(waiting))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
