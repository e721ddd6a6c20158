package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
)

var ensembleCmd = &command{
	name:     "ensemble",
	synopsis: "ensemble [--json]",
	summary:  "list the ensemble's members, their roles and modes, and which one zkr is connected to",
	help: `Lists the members of the ensemble: from its configuration (/zookeeper/config,
ZooKeeper 3.5+) when that names client addresses (a dynamic configuration), each
with its id, role (participant or observer) and client address; else the servers
given with --servers. For each, its mode as the server says it (srvr: leader,
follower, observer, standalone) or "unreachable", and "*" on the one zkr's session
is connected to. The configuration's version is printed last.`,
	example: "  zkr ensemble --servers zk-0.zk-hs:2181\n  zkr ensemble --json | jq -r '.members[] | select(.mode == \"leader\") | .client'",
	flags: func(fs *flag.FlagSet) func(*env, []string, []string, bool) int {
		asJSON := fs.Bool("json", false, "print JSON for scripts: {version, connected, members: [{id, role, client, mode, connected}]}")
		return func(e *env, pos, argv []string, dash bool) int {
			if dash || len(pos) > 0 {
				return e.fail(usageError("ensemble takes no arguments"))
			}
			return showWith(e, "the ensemble", *asJSON, func(ctx context.Context, c *framework.Client) (finding, error) {
				return lookEnsemble(ctx, c)
			})
		}
	},
}

// ensembleView is what zkr ensemble prints.
type ensembleView struct {
	Version   string         `json:"version,omitempty"` // hex, as ZooKeeper writes it
	Connected string         `json:"connected"`         // the address zkr's session is on
	Members   []memberStatus `json:"members"`
}

type memberStatus struct {
	ID        int64  `json:"id,omitempty"`
	Role      string `json:"role,omitempty"`
	Client    string `json:"client"`
	Mode      string `json:"mode"`
	Connected bool   `json:"connected"`
}

func lookEnsemble(ctx context.Context, c *framework.Client) (finding, error) {
	v := &ensembleView{Connected: c.Conn().Server()}
	cfg, err := c.Config(ctx)
	if err == nil && len(cfg.ClientAddrs()) == len(cfg.Members) && len(cfg.Members) > 0 {
		v.Version = strconv.FormatInt(cfg.Version, 16)
		for _, m := range cfg.Members {
			v.Members = append(v.Members, memberStatus{ID: m.ID, Role: m.Role, Client: m.Client})
		}
	} else {
		if err == nil {
			v.Version = strconv.FormatInt(cfg.Version, 16)
		}
		for _, s := range c.Servers() {
			v.Members = append(v.Members, memberStatus{Client: s})
		}
		slices.SortFunc(v.Members, func(a, b memberStatus) int { return strings.Compare(a.Client, b.Client) })
	}
	for i := range v.Members {
		m := &v.Members[i]
		m.Mode = serverMode(ctx, m.Client)
		m.Connected = sameServer(ctx, m.Client, v.Connected)
	}
	return v, nil
}

// serverMode asks a server for its mode with srvr, the one four-letter word
// ZooKeeper allows by default.
func serverMode(ctx context.Context, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "unreachable"
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return "unreachable"
	}
	out, _ := io.ReadAll(conn)
	for _, line := range strings.Split(string(out), "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode)
		}
	}
	return "not serving"
}

// sameServer says whether addr (a name or an address, as listed) is the address
// the session is connected to (always an address: the client resolves names).
func sameServer(ctx context.Context, addr, connected string) bool {
	if addr == connected {
		return true
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if net.JoinHostPort(ip, port) == connected {
			return true
		}
	}
	return false
}

func (v *ensembleView) print(e *env) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\tID\tROLE\tCLIENT\tMODE")
	for _, m := range v.Members {
		mark, id, role := "", "-", m.Role
		if m.Connected {
			mark = "*"
		}
		if m.ID != 0 {
			id = strconv.FormatInt(m.ID, 10)
		}
		if role == "" {
			role = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", mark, id, printable(role), printable(m.Client), printable(m.Mode))
	}
	_ = w.Flush()
	if v.Version != "" {
		fmt.Fprintf(e.stdout, "configuration version 0x%s; * is where zkr's session is (%s)\n", v.Version, v.Connected)
	} else {
		fmt.Fprintf(e.stdout, "* is where zkr's session is (%s)\n", v.Connected)
	}
}
