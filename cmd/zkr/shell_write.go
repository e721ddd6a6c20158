package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

var setCmd = &command{
	name:     "set",
	synopsis: "set [--version N] PATH DATA",
	summary:  "write a node's data (DATA - reads stdin)",
	help: `Replaces the data of PATH with DATA, or with stdin to its end when DATA is "-".
With --version N, only if the node's version is N (a compare-and-set: exit code
65 if another write came first). Prints nothing.`,
	example: "  zkr set /config/feature on\n  zkr set /config/blob - < blob.bin\n" +
		"  v=$(zkr stat /config/n --json | jq .version); zkr set --version \"$v\" /config/n 42",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		var version int
		versionFlag(fs, &version)
		return func(e *env, pos, _ []string, dash bool) int {
			p, rest, err := nodeArgs(pos, dash, 2, 2)
			if err == nil {
				err = checkVersion(version)
			}
			if err != nil {
				return e.fail(err)
			}
			data, err := e.data(rest[0])
			if err != nil {
				return e.fail(usageError("%v", err))
			}
			return runOp(e, func(ctx context.Context, c *framework.Client) error {
				_, err := c.Set(ctx, p, data, int32(version))
				return nodeErrorOr(p, err)
			})
		}
	},
}

var createCmd = &command{
	name:     "create",
	synopsis: "create [-p] [--sequential] [--container | --ttl D] PATH [DATA]",
	summary:  "create a node (-p: and its missing parents)",
	help: `Creates PATH, persistent, with DATA (empty when not given; "-" reads stdin), and
prints its path: with --sequential, the server appends a ten-digit sequence
number to the name, and the path printed has it. With -p, missing parents are
created first (empty); without it, a missing parent fails with exit code 66.
A node that exists fails with exit code 73.

--container makes a container node, which the server deletes once its last child
is gone; --ttl D a node that the server deletes once it has had no child and no
change for D (the server must allow it: zookeeper.extendedTypesEnabled=true).

zkr does not create ephemeral nodes: one lives as long as the session that made
it, and zkr's session ends when zkr exits, so the node would be gone at once. To
keep a node while a command runs, hold a lock on it (zkr lock PATH -- CMD).

A --sequential create is not retried after a lost connection (a second node could
be made): on exit code 69, look with zkr ls before trying again.`,
	example: "  zkr create -p /config/feature on\n  zkr create --sequential /jobs/job- \"$payload\"\n  zkr create --ttl 1h /tmp/marker",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		parents := fs.Bool("p", false, "create missing parents too, as persistent empty nodes")
		sequential := fs.Bool("sequential", false, "append the server's sequence number to the name")
		container := fs.Bool("container", false, "make a container node")
		ttl := fs.Duration("ttl", 0, "make a TTL node that lives this `duration` once childless and unchanged")
		ephemeral := fs.Bool("ephemeral", false, "refused: an ephemeral node would go when zkr exits")
		return func(e *env, pos, _ []string, dash bool) int {
			p, rest, err := nodeArgs(pos, dash, 1, 2)
			switch {
			case err != nil:
			case *ephemeral:
				err = usageError("--ephemeral: the node would be deleted when zkr exits, with its session; hold a lock instead (zkr lock PATH -- CMD)")
			case p == "/":
				err = usageError(`invalid PATH "/": the root exists`)
			case *container && (*sequential || *ttl != 0):
				err = usageError("--container goes with neither --sequential nor --ttl")
			case *ttl < 0 || (*ttl > 0 && *ttl < time.Millisecond):
				err = usageError("--ttl wants a duration of 1ms or more, not %v", *ttl)
			}
			if err != nil {
				return e.fail(err)
			}
			var data []byte
			if len(rest) > 0 {
				if data, err = e.data(rest[0]); err != nil {
					return e.fail(usageError("%v", err))
				}
			}
			var opts []framework.CreateOption
			if *parents {
				opts = append(opts, framework.CreatingParents())
			}
			if *sequential {
				opts = append(opts, framework.Sequential())
			}
			if *container {
				opts = append(opts, framework.Container())
			}
			if *ttl > 0 {
				opts = append(opts, framework.TTL(*ttl))
			}
			return runOp(e, func(ctx context.Context, c *framework.Client) error {
				created, err := c.Create(ctx, p, data, opts...)
				if errors.Is(err, framework.ErrNoNode) {
					return &exitError{exitNoNode, fmt.Sprintf("%s: no parent node %s (-p creates it)", p, path.Dir(p))}
				}
				if err != nil {
					return nodeError(p, err)
				}
				fmt.Fprintln(e.stdout, created)
				return nil
			})
		}
	},
}

var rmCmd = &command{
	name:     "rm",
	synopsis: "rm [-r] [--version N] PATH",
	summary:  "delete a node (-r: with its subtree)",
	help: `Deletes PATH. A node with children fails with exit code 65, unless -r: then its
subtree goes first, deepest nodes first; a node that someone else deletes
meanwhile is fine, and children created meanwhile are deleted too. With
--version N, PATH is deleted only if its version is N (its children's versions
are not checked). Prints nothing. The root cannot be deleted.`,
	example: "  zkr rm /config/feature\n  zkr rm -r /jobs/old",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		recursive := fs.Bool("r", false, "delete the subtree too")
		var version int
		versionFlag(fs, &version)
		return func(e *env, pos, _ []string, dash bool) int {
			p, _, err := nodeArgs(pos, dash, 1, 1)
			switch {
			case err != nil:
			case p == "/":
				err = usageError(`invalid PATH "/": the root cannot be deleted`)
			default:
				err = checkVersion(version)
			}
			if err != nil {
				return e.fail(err)
			}
			return runOp(e, func(ctx context.Context, c *framework.Client) error {
				if !*recursive {
					return nodeErrorOr(p, c.Delete(ctx, p, int32(version)))
				}
				return removeAll(ctx, c, p, int32(version))
			})
		}
	},
}

// removeAll deletes p's subtree, then p if its version is version (-1: any). A node
// deleted by someone else meanwhile counts as deleted; a child created meanwhile
// makes the parent's delete fail as not empty, and is deleted in turn. A p whose
// version is not version is refused before anything under it is deleted. Cancelling
// ctx stops it: what was deleted stays deleted.
func removeAll(ctx context.Context, c *framework.Client, p string, version int32) error {
	for {
		names, st, err := c.Children(ctx, p)
		if err != nil {
			return nodeError(p, err) // p itself is missing: that is the user's error
		}
		if version != -1 && st.Version != version {
			return nodeError(p, framework.ErrBadVersion) // the final Delete checks it again
		}
		for _, n := range names {
			err := removeAll(ctx, c, path.Join(p, n), -1)
			if ee := (*exitError)(nil); errors.As(err, &ee) && ee.code == exitNoNode {
				continue // deleted by someone else
			}
			if err != nil {
				return err
			}
		}
		err = c.Delete(ctx, p, version)
		if !errors.Is(err, framework.ErrNotEmpty) {
			return nodeErrorOr(p, err)
		}
	}
}

func nodeErrorOr(p string, err error) error {
	if err == nil {
		return nil
	}
	return nodeError(p, err)
}
