package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/zkrecipes/zkrecipes/framework"

	"github.com/zkrecipes/zkrecipes/recipes/participants"
)

// The views of a node that no lock queue explains, with Curator's layouts: a group
// (GroupMember: PATH/<id>, ephemeral, data = payload), a shared value (SharedValue:
// any bytes), a shared count (SharedCount: a 4-byte big-endian int) and a counter
// (DistributedAtomicLong: an 8-byte big-endian long).
const (
	asGroup   = "group"
	asValue   = "value"
	asCount   = "count"
	asCounter = "counter"
)

var asViews = []string{asGroup, asValue, asCount, asCounter}

// view is what inspect shows of a recipe's path, also on one line for --watch.
type view interface {
	finding
	summary() string
}

// look finds what PATH is: with as set, that view of it; else the lock queue at p if
// there is one, else a view told from the node's layout.
//
// The layout tells a group (children that are all ephemeral leaves, as members'
// nodes are) from a value; a value's length tells a count (4 bytes) or a counter
// (8) only by likelihood, since a shared value may hold any bytes: such a view says
// it was inferred. An empty node without children (an idle lock's parent, an empty
// group) shows as no participants.
func look(ctx context.Context, r participants.Reader, p, as string) (view, error) {
	switch as {
	case asGroup:
		return readGroup(ctx, r, p)
	case asValue, asCount, asCounter:
		return readValue(ctx, r, p, as, false)
	}
	// One listing for both readings, so that a queue whose nodes a cache's copy is
	// still loading is never taken for a group.
	children, err := r.Children(ctx, p)
	if err != nil {
		return nil, err
	}
	q, err := surveyOf(ctx, r, p, children)
	switch {
	case err != nil:
		return nil, err
	case q.Recipe != "":
		return q, nil
	}
	data, st, err := r.Get(ctx, p)
	switch {
	case err != nil:
		return nil, nodeError(p, err) // no node: --watch shows it, until one appears
	case st.NumChildren > 0 || len(children) > 0:
		g, err := groupOf(ctx, r, p, children)
		if err != nil {
			return nil, err
		}
		// Go by the children read, not the stat's count: a cache's copy may have
		// counted a child that it has not loaded yet, or that is gone.
		switch {
		case len(g.Members) == 0:
			return q, nil
		case !g.allEphemeral:
			return &plainView{Path: p, Children: len(g.Members), DataBytes: len(data), Version: st.Version,
				Modified: time.UnixMilli(st.Mtime).UTC()}, nil
		}
		return g, nil
	case len(data) == 0:
		return q, nil
	case len(data) == 4:
		return readValue(ctx, r, p, asCount, true)
	case len(data) == 8:
		return readValue(ctx, r, p, asCounter, true)
	default:
		return readValue(ctx, r, p, asValue, true)
	}
}

// plainView is a node with children that no recipe's layout explains.
type plainView struct {
	Path      string    `json:"path"`
	Recipe    string    `json:"recipe"` // always "": no recipe's
	Children  int       `json:"children"`
	DataBytes int       `json:"data_bytes"`
	Version   int32     `json:"version"`
	Modified  time.Time `json:"modified"`
}

func (v *plainView) print(e *env) { fmt.Fprintln(e.stdout, v.summary()) }

func (v *plainView) summary() string {
	return fmt.Sprintf("%s: no recipe's node (no lock queue, no group): %d children, %d bytes of data, version %d, modified %s",
		v.Path, v.Children, v.DataBytes, v.Version, v.Modified.Format(time.RFC3339))
}

// blob is data in JSON: as text when it is UTF-8, else base64.
type blob struct {
	Text   *string `json:"text,omitempty"`
	Base64 string  `json:"base64,omitempty"`
}

func newBlob(b []byte) blob {
	if utf8.Valid(b) {
		s := string(b)
		return blob{Text: &s}
	}
	return blob{Base64: base64.StdEncoding.EncodeToString(b)}
}

// String is the data for people: quoted text, or hex.
func (b blob) String() string {
	if b.Text != nil {
		return strconv.Quote(*b.Text)
	}
	raw, _ := base64.StdEncoding.DecodeString(b.Base64)
	return fmt.Sprintf("0x%x", raw)
}

// groupView is a group's members, in id order.
type groupView struct {
	Path         string        `json:"path"`
	Recipe       string        `json:"recipe"` // group
	Members      []groupMember `json:"members"`
	allEphemeral bool          // every member's node is an ephemeral leaf
}

type groupMember struct {
	ID      string    `json:"id"`
	Payload blob      `json:"payload"`
	Session string    `json:"session"` // the node's ephemeral owner, in hex
	Created time.Time `json:"created"`
}

func readGroup(ctx context.Context, r participants.Reader, p string) (*groupView, error) {
	names, err := r.Children(ctx, p)
	if err != nil {
		return nil, err
	}
	return groupOf(ctx, r, p, names)
}

// groupOf reads the group at p whose members are names.
func groupOf(ctx context.Context, r participants.Reader, p string, names []string) (*groupView, error) {
	g := &groupView{Path: p, Recipe: asGroup, Members: []groupMember{}, allEphemeral: true}
	for _, id := range slices.Sorted(slices.Values(names)) {
		data, st, err := r.Get(ctx, path.Join(p, id))
		if errors.Is(err, framework.ErrNoNode) { // left while we listed
			continue
		}
		if err != nil {
			return nil, err
		}
		g.allEphemeral = g.allEphemeral && st.EphemeralOwner != 0 && st.NumChildren == 0
		g.Members = append(g.Members, groupMember{ID: id, Payload: newBlob(data),
			Session: fmt.Sprintf("%#x", st.EphemeralOwner), Created: time.UnixMilli(st.Ctime).UTC()})
	}
	return g, nil
}

func (g *groupView) print(e *env) {
	fmt.Fprintf(e.stdout, "%s: group, %d members\n", g.Path, len(g.Members))
	if len(g.Members) == 0 {
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPAYLOAD\tSESSION\tAGE")
	for _, m := range g.Members {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(m.ID), m.Payload, m.Session, age(time.Since(m.Created)))
	}
	_ = tw.Flush()
}

func (g *groupView) summary() string {
	ms := make([]string, len(g.Members))
	for i, m := range g.Members {
		ms[i] = printable(m.ID) + "=" + m.Payload.String()
	}
	return fmt.Sprintf("%s: group, %d members: %s", g.Path, len(g.Members), strings.Join(ms, ", "))
}

// valueView is a node read as a shared value, a shared count or a counter.
type valueView struct {
	Path   string `json:"path"`
	Recipe string `json:"recipe"` // value, count or counter
	// Inferred: the recipe was told from the data's length alone (--as was not
	// given); a shared value of 4 or 8 bytes would look the same.
	Inferred bool      `json:"inferred"`
	Exists   bool      `json:"exists"`
	Number   *int64    `json:"number,omitempty"` // a count's or a counter's
	Data     blob      `json:"data"`
	Version  int32     `json:"version"`
	Modified time.Time `json:"modified"`
}

// readValue reads p as the given view; a count or counter whose data has another
// length is an error with exit code 65.
func readValue(ctx context.Context, r participants.Reader, p, as string, inferred bool) (*valueView, error) {
	v := &valueView{Path: p, Recipe: as, Inferred: inferred}
	data, st, err := r.Get(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return v, nil
	}
	if err != nil {
		return nil, err
	}
	v.Exists, v.Data, v.Version, v.Modified = true, newBlob(data), st.Version, time.UnixMilli(st.Mtime).UTC()
	want := map[string]int{asCount: 4, asCounter: 8}[as]
	if want == 0 {
		return v, nil
	}
	if len(data) != want {
		return nil, &exitError{exitData, fmt.Sprintf("%s holds %d bytes, not the %d of a %s", p, len(data), want, describeView(as))}
	}
	n := int64(int32(binary.BigEndian.Uint32(data)))
	if as == asCounter {
		n = int64(binary.BigEndian.Uint64(data))
	}
	v.Number = &n
	return v, nil
}

func describeView(as string) string {
	switch as {
	case asCount:
		return "shared count"
	case asCounter:
		return "counter"
	}
	return "shared value"
}

func (v *valueView) print(e *env) {
	fmt.Fprintln(e.stdout, v.summary())
}

func (v *valueView) summary() string {
	if !v.Exists {
		return fmt.Sprintf("%s: no such node", v.Path)
	}
	var s string
	switch {
	case v.Number != nil && v.Recipe == asCounter:
		s = fmt.Sprintf("%s: counter %d", v.Path, *v.Number)
	case v.Number != nil:
		s = fmt.Sprintf("%s: shared count %d, version %d", v.Path, *v.Number, v.Version)
	default:
		s = fmt.Sprintf("%s: shared value %s, version %d", v.Path, v.Data, v.Version)
	}
	if v.Inferred && v.Number != nil {
		s += fmt.Sprintf(" (told by its length; --as value shows the bytes: %s)", v.Data)
	}
	return s
}
