package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The ZooKeeper shell's commands (ls, get, stat, set, create, rm) share these:
// one request or a few, against a client made from the global flags.

// runOp connects, runs op until it returns or a terminating signal comes, and
// reports how it ended. op's errors are nodeError's.
func runOp(e *env, op func(context.Context, *framework.Client) error) int {
	s, code := e.start()
	if s == nil {
		return code
	}
	defer s.close()
	ctx, stop := s.interruptible(context.Background())
	err := op(ctx, s.client)
	if sig := stop(); sig != 0 {
		return exitSignal + int(sig)
	}
	if err != nil {
		return s.fail(err)
	}
	return exitOK
}

// nodeArgs checks a shell command's positional arguments: PATH first, minArgs to
// maxArgs of them in all (PATH and DATA), and no command after "--".
func nodeArgs(pos []string, dash bool, minArgs, maxArgs int) (string, []string, error) {
	switch {
	case dash:
		return "", nil, usageError("runs no command after --")
	case len(pos) == 0:
		return "", nil, usageError("missing PATH")
	case len(pos) < minArgs:
		return "", nil, usageError("missing DATA after PATH (- reads it from stdin)")
	case len(pos) > maxArgs:
		return "", nil, usageError("unexpected argument %q", pos[maxArgs])
	}
	if err := framework.ValidatePath(pos[0]); err != nil {
		return "", nil, usageError("invalid PATH %s", strings.TrimPrefix(err.Error(), framework.ErrInvalidPath.Error()+" "))
	}
	return pos[0], pos[1:], nil
}

// data is DATA as given: "-" reads stdin to its end.
func (e *env) data(arg string) ([]byte, error) {
	if arg != "-" {
		return []byte(arg), nil
	}
	b, err := io.ReadAll(e.stdin)
	if err != nil {
		return nil, fmt.Errorf("reading DATA from stdin: %w", err)
	}
	return b, nil
}

// versionFlag is --version for set and rm.
func versionFlag(fs *flag.FlagSet, v *int) {
	fs.IntVar(v, "version", -1, "act only if the node's version is `N`, else fail with exit code 65 (default -1: any version)")
}

func checkVersion(v int) error {
	if v < -1 || v > 1<<31-1 {
		return usageError("--version wants a node version, 0 to 2147483647 (or -1, any), not %d", v)
	}
	return nil
}

// printJSON prints v for scripts, indented.
func (e *env) printJSON(v any) {
	data, _ := json.MarshalIndent(v, "", "  ") // plain data
	_, _ = fmt.Fprintf(e.stdout, "%s\n", escapeJSON(data))
}

// nodeStat is a node's stat in JSON, the one schema zkr shows it in: stat --json,
// get --json and zkr ui's /api/node. ZooKeeper's names; zxids in decimal, as
// fencing tokens are; times in UTC; the owning session in hex, as elsewhere.
type nodeStat struct {
	Czxid          int64     `json:"czxid"`
	Mzxid          int64     `json:"mzxid"`
	Pzxid          int64     `json:"pzxid"`
	Ctime          time.Time `json:"ctime"`
	Mtime          time.Time `json:"mtime"`
	Version        int32     `json:"version"`
	Cversion       int32     `json:"cversion"`
	Aversion       int32     `json:"aversion"`
	EphemeralOwner string    `json:"ephemeral_owner"` // the owning session, in hex; 0x0 when persistent
	DataLength     int32     `json:"data_length"`
	NumChildren    int32     `json:"num_children"`
}

func newNodeStat(st *framework.Stat) nodeStat {
	return nodeStat{
		Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid,
		Ctime: time.UnixMilli(st.Ctime).UTC(), Mtime: time.UnixMilli(st.Mtime).UTC(),
		Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion,
		EphemeralOwner: fmt.Sprintf("%#x", st.EphemeralOwner), DataLength: st.DataLength, NumChildren: st.NumChildren,
	}
}

func (s nodeStat) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range [][2]any{
		{"czxid", s.Czxid}, {"mzxid", s.Mzxid}, {"pzxid", s.Pzxid}, // decimal, as --json and fencing tokens
		{"ctime", s.Ctime.Format(time.RFC3339Nano)}, {"mtime", s.Mtime.Format(time.RFC3339Nano)},
		{"version", s.Version}, {"cversion", s.Cversion}, {"aversion", s.Aversion},
		{"ephemeral_owner", s.EphemeralOwner}, {"data_length", s.DataLength}, {"num_children", s.NumChildren},
	} {
		fmt.Fprintf(tw, "%s\t%v\n", row[0], row[1])
	}
	_ = tw.Flush()
}
