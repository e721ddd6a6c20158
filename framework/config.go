package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// configPath is where ZooKeeper 3.5+ publishes the ensemble's configuration.
const configPath = "/zookeeper/config"

// ErrInvalidReconfig is wrapped by the error of a Reconfig given a malformed server
// spec, or nothing to change; nothing is sent.
var ErrInvalidReconfig = errors.New("framework: invalid reconfig")

// ErrReconfigNoQuorum is wrapped by the error of a Reconfig that the leader refused
// because a quorum of the new configuration's voters is not connected to it
// (ZooKeeper's NEWCONFIGNOQUORUM): start the members being added first.
var ErrReconfigNoQuorum = errors.New("framework: the new configuration has no quorum of connected servers")

// ErrReconfigInProgress is wrapped by the error of a Reconfig refused because
// another one is under way (ZooKeeper's RECONFIGINPROGRESS); try again.
var ErrReconfigInProgress = errors.New("framework: another reconfiguration is in progress")

// Config is an ensemble's configuration as ZooKeeper publishes it in
// /zookeeper/config.
type Config struct {
	Members []Member
	Version int64 // the configuration's version: the zxid that made it (fromConfig of Reconfig)
}

// Member is one server of an ensemble's configuration.
type Member struct {
	ID           int64
	Host         string // where its peers reach it, as the configuration writes it
	PeerPort     int
	ElectionPort int
	Role         string // "participant" (votes) or "observer"
	// Client is where clients reach it, "host:port", with the host as the
	// configuration writes it, or Host when the configuration names a wildcard
	// address (0.0.0.0, ::) or none. "" in a static configuration, which names no
	// client address at all, and where both are wildcards.
	Client string
}

// ClientAddrs are the members' client addresses, in member order; nil in a static
// configuration.
func (cfg Config) ClientAddrs() []string {
	var addrs []string
	for _, m := range cfg.Members {
		if m.Client != "" {
			addrs = append(addrs, m.Client)
		}
	}
	return addrs
}

// Config reads the ensemble's configuration from /zookeeper/config, whatever the
// client's namespace. A server older than 3.5 has none: an error wrapping
// zk.ErrNoNode. Retried on connection errors like every operation.
func (c *Client) Config(ctx context.Context) (Config, error) {
	data, _, _, err := c.readConfig(ctx, false)
	if err != nil {
		return Config{}, err
	}
	return parseConfig(data)
}

// readConfig reads /zookeeper/config, leaving a watch on it if asked. It is not
// under the namespace, so not through call, which puts every path there.
func (c *Client) readConfig(ctx context.Context, watch bool) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	if err := c.view.usable(); err != nil {
		return nil, nil, nil, err
	}
	var r getResult
	err := c.retry(ctx, opGet, func(ctx context.Context) error {
		var err error
		r, err = attempt(c, ctx, configPath, func(conn *zk.Conn, p string) (getResult, error) {
			if watch {
				data, stat, w, err := conn.GetW(p)
				return getResult{data: data, stat: stat, watch: w}, err
			}
			data, stat, err := conn.Get(p)
			return getResult{data: data, stat: stat}, err
		}, nil)
		return err
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("framework: reading the ensemble's configuration: %w", c.explain(err))
	}
	return r.data, r.stat, r.watch, nil
}

// Reconfig changes the ensemble's membership with ZooKeeper's incremental
// reconfiguration: joining are server lines to add or change
// ("server.4=host:2888:3888:participant;host:2181"), leaving are ids of servers to
// remove ("3"). With fromConfig other than -1, it applies only if the configuration
// is still that version (Config's Version); else it fails with an error wrapping
// zk.ErrBadVersion. It returns the configuration that results.
//
// The servers must allow it (reconfigEnabled=true; else ErrReconfigDisabled)
// and the client must be allowed to write /zookeeper/config (a superuser's
// credentials, or skipACL=yes on the servers; else zk.ErrNoAuth). The leader refuses
// a configuration whose voters are not connected to it (ErrReconfigNoQuorum) and one
// asked for while another is under way (ErrReconfigInProgress). Malformed lines are
// refused before anything is sent (ErrInvalidReconfig). A reconfig is not retried
// after a connection loss, since it may have been applied: read Config to see.
// When ctx ends, the request, if sent, may still be applied.
func (c *Client) Reconfig(ctx context.Context, joining, leaving []string, fromConfig int64) (Config, error) {
	if err := checkReconfig(joining, leaving); err != nil {
		return Config{}, err
	}
	if err := c.view.usable(); err != nil {
		return Config{}, err
	}
	start := c.metrics.start()
	_, err := attempt(c, ctx, "", func(conn *zk.Conn, _ string) (*zk.Stat, error) {
		return conn.IncrementalReconfig(joining, leaving, fromConfig)
	}, nil)
	c.metrics.request(ctx, opReconfig, start, err)
	if err != nil {
		return Config{}, fmt.Errorf("framework: reconfig (joining %q, leaving %q, from version %#x): %w",
			joining, leaving, fromConfig, explainReconfig(c.explain(err)))
	}
	return c.Config(ctx)
}

// explainReconfig names the errors go-zookeeper has no value for, and says what
// the others mean for a reconfig.
func explainReconfig(err error) error {
	switch {
	case err.Error() == "unknown error: -13":
		return fmt.Errorf("%w: %w", ErrReconfigNoQuorum, err)
	case err.Error() == "unknown error: -14":
		return fmt.Errorf("%w: %w", ErrReconfigInProgress, err)
	case errors.Is(err, zk.ErrReconfigDisabled):
		return fmt.Errorf("the servers do not allow reconfiguration (reconfigEnabled=true): %w", err)
	case errors.Is(err, zk.ErrNoAuth):
		return fmt.Errorf("%w (a reconfig needs a superuser, or skipACL=yes on the servers)", err)
	case errors.Is(err, zk.ErrBadVersion):
		return fmt.Errorf("the configuration is no longer that version (read Config again): %w", err)
	case errors.Is(err, zk.ErrBadArguments):
		return fmt.Errorf("the leader refused the change (a member to remove that is not one, or removing them all?): %w", err)
	}
	return err
}

func checkReconfig(joining, leaving []string) error {
	if len(joining) == 0 && len(leaving) == 0 {
		return fmt.Errorf("%w: nothing joining or leaving", ErrInvalidReconfig)
	}
	for _, j := range joining {
		if _, err := parseServerLine(j); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidReconfig, err)
		}
	}
	for _, l := range leaving {
		if id, err := strconv.ParseInt(l, 10, 64); err != nil || id < 0 {
			return fmt.Errorf("%w: a leaving server is named by its id (\"3\"), not %q", ErrInvalidReconfig, l)
		}
	}
	return nil
}

// parseConfig reads the text of /zookeeper/config: server.N lines and a version.
func parseConfig(data []byte) (Config, error) {
	var cfg Config
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "server."):
			m, err := parseServerLine(line)
			if err != nil {
				return Config{}, fmt.Errorf("framework: the ensemble's configuration: %w", err)
			}
			cfg.Members = append(cfg.Members, m)
		case strings.HasPrefix(line, "version="):
			v, err := strconv.ParseInt(strings.TrimPrefix(line, "version="), 16, 64)
			if err != nil {
				return Config{}, fmt.Errorf("framework: the ensemble's configuration: bad %q", line)
			}
			cfg.Version = v
		}
	}
	return cfg, nil
}

// parseServerLine reads "server.N=host:peer:election[:role][;[clientHost:]clientPort]".
func parseServerLine(line string) (Member, error) {
	bad := func(why string) (Member, error) {
		return Member{}, fmt.Errorf("server line %q: %s (want server.N=host:peer:election[:participant|:observer][;[host:]port])", line, why)
	}
	key, value, ok := strings.Cut(line, "=")
	id, err := strconv.ParseInt(strings.TrimPrefix(key, "server."), 10, 64)
	if !ok || !strings.HasPrefix(key, "server.") || err != nil || id < 0 {
		return bad("no server.N=")
	}
	server, client, hasClient := strings.Cut(value, ";")
	m := Member{ID: id, Role: "participant"}
	host, rest, err := cutHost(server)
	if err != nil {
		return bad(err.Error())
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("want a peer and an election port")
	}
	if m.PeerPort, err = parsePort(parts[0]); err != nil {
		return bad(err.Error())
	}
	if m.ElectionPort, err = parsePort(parts[1]); err != nil {
		return bad(err.Error())
	}
	if len(parts) == 3 {
		if parts[2] != "participant" && parts[2] != "observer" {
			return bad("the role is participant or observer")
		}
		m.Role = parts[2]
	}
	m.Host = host
	if hasClient {
		if m.Client, err = clientAddr(client, host); err != nil {
			return bad(err.Error())
		}
	}
	return m, nil
}

// cutHost splits "host:rest" or "[v6]:rest".
func cutHost(s string) (host, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return "", "", errors.New("an unclosed [")
		}
		return s[1:end], s[end+2:], nil
	}
	host, rest, ok := strings.Cut(s, ":")
	if !ok || host == "" {
		return "", "", errors.New("no host")
	}
	return host, rest, nil
}

// clientAddr reads the client part, "port" or "host:port"; a wildcard host or none
// means the member's own host.
func clientAddr(s, memberHost string) (string, error) {
	host, portText := memberHost, s
	if strings.Contains(s, ":") {
		var err error
		if host, portText, err = net.SplitHostPort(s); err != nil {
			return "", err
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			host = memberHost
		}
	}
	port, err := parsePort(portText)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "", nil // the member's own line says 0.0.0.0: no address a client can use
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p <= 0 || p > 65535 {
		return 0, fmt.Errorf("%q is not a port", s)
	}
	return p, nil
}
