package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

var lsCmd = &command{
	name:     "ls",
	synopsis: "ls [-R] [--json] PATH",
	summary:  "list a node's children (-R: its whole subtree), as zkCli's ls",
	help: `Lists the children of PATH, by name, one a line, sorted. With -R, PATH and
every node below it, by full path, one a line, each before its children: a node
deleted while zkr lists is left out. PATH may be "/".`,
	example: "  zkr ls /\n  zkr ls -R /config\n  zkr ls /workers --json | jq -r '.children[]'",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		recursive := fs.Bool("R", false, "list the whole subtree, by full path")
		asJSON := fs.Bool("json", false, `print {"path", "children": [names]}, or with -R {"path", "nodes": [paths]}`)
		return func(e *env, pos, _ []string, dash bool) int {
			p, _, err := nodeArgs(pos, dash, 1, 1)
			if err != nil {
				return e.fail(err)
			}
			return runOp(e, func(ctx context.Context, c *framework.Client) error {
				return ls(ctx, e, c, p, *recursive, *asJSON)
			})
		}
	},
}

func ls(ctx context.Context, e *env, c *framework.Client, p string, recursive, asJSON bool) error {
	names, _, err := c.Children(ctx, p)
	if err != nil {
		return nodeError(p, err)
	}
	slices.Sort(names)
	if !recursive {
		if asJSON {
			e.printJSON(struct {
				Path     string   `json:"path"`
				Children []string `json:"children"`
			}{p, append([]string{}, names...)})
			return nil
		}
		for _, n := range names {
			fmt.Fprintln(e.stdout, e.shown(n))
		}
		return nil
	}
	nodes := []string{p}
	for _, n := range names {
		if nodes, err = walk(ctx, c, path.Join(p, n), nodes); err != nil {
			return err
		}
	}
	if asJSON {
		e.printJSON(struct {
			Path  string   `json:"path"`
			Nodes []string `json:"nodes"`
		}{p, nodes})
		return nil
	}
	for _, n := range nodes {
		fmt.Fprintln(e.stdout, e.shown(n))
	}
	return nil
}

// shown is a name as ls prints it: escaped on a terminal (printable), as it is
// for a script.
func (e *env) shown(name string) string {
	if e.onTerminal() {
		return printable(name)
	}
	return name
}

// onTerminal tells whether stdout is a terminal.
func (e *env) onTerminal() bool {
	f, ok := e.stdout.(*os.File)
	return ok && isTerminal(f)
}

// walk appends p and its subtree to nodes, depth first, in name order; a node
// deleted meanwhile is left out with its subtree.
func walk(ctx context.Context, c *framework.Client, p string, nodes []string) ([]string, error) {
	names, _, err := c.Children(ctx, p)
	if errors.Is(err, framework.ErrNoNode) {
		return nodes, nil
	}
	if err != nil {
		return nil, nodeError(p, err)
	}
	nodes = append(nodes, p)
	slices.Sort(names)
	for _, n := range names {
		if nodes, err = walk(ctx, c, path.Join(p, n), nodes); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

var getCmd = &command{
	name:     "get",
	synopsis: "get [--json] PATH",
	summary:  "print a node's data",
	help: `Prints the data of PATH on stdout, as stored, byte for byte, so that
zkr get PATH > FILE copies it. On a terminal, control characters other than
newlines and tabs are shown escaped (\x1b), and a newline ends the data. With --json, the data (as text when it is UTF-8, else base64) and the node's
stat (see zkr stat).`,
	example: "  zkr get /config/feature\n  zkr get /config/blob > blob.bin\n  zkr get /config/feature --json | jq .stat.version",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		asJSON := fs.Bool("json", false, `print {"path", "data": {"text"|"base64"}, "stat"}`)
		return func(e *env, pos, _ []string, dash bool) int {
			p, _, err := nodeArgs(pos, dash, 1, 1)
			if err != nil {
				return e.fail(err)
			}
			return runOp(e, func(ctx context.Context, c *framework.Client) error {
				data, st, err := c.Get(ctx, p)
				if err != nil {
					return nodeError(p, err)
				}
				if *asJSON {
					e.printJSON(struct {
						Path string   `json:"path"`
						Data blob     `json:"data"`
						Stat nodeStat `json:"stat"`
					}{p, newBlob(data), newNodeStat(st)})
					return nil
				}
				if !e.onTerminal() {
					_, _ = e.stdout.Write(data)
					return nil
				}
				text := printableText(string(data))
				if text != "" && !strings.HasSuffix(text, "\n") {
					text += "\n"
				}
				fmt.Fprint(e.stdout, text)
				return nil
			})
		}
	},
}

var statCmd = &command{
	name:     "stat",
	synopsis: "stat [--json] PATH",
	summary:  "print a node's stat: zxids, times, versions, owner, sizes",
	help: `Prints the stat of PATH, one field a line: the zxids of its creation, last
change and last change of its children, in decimal (as --json and fencing tokens
show them); its creation and modification times; the versions of its data,
children and ACL; its ephemeral owner (the session, in hex as ZooKeeper's own
tools show sessions, 0x0 for a persistent node); its data length and number of
children.`,
	example: "  zkr stat /config/feature\n  zkr stat /config/feature --json | jq .version",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		asJSON := fs.Bool("json", false, "print the stat as one JSON object")
		return func(e *env, pos, _ []string, dash bool) int {
			p, _, err := nodeArgs(pos, dash, 1, 1)
			if err != nil {
				return e.fail(err)
			}
			return runOp(e, func(ctx context.Context, c *framework.Client) error {
				ok, st, err := c.Exists(ctx, p)
				switch {
				case err != nil:
					return nodeError(p, err)
				case !ok:
					return nodeError(p, framework.ErrNoNode)
				case *asJSON:
					e.printJSON(newNodeStat(st))
				default:
					newNodeStat(st).print(e.stdout)
				}
				return nil
			})
		}
	},
}
