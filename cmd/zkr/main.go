// Command zkr takes ZooKeeper locks, semaphore leases and leadership for shell
// scripts and cron: it waits for the lock, runs a command while holding it, and
// releases it after. If the lock may be lost while the command runs (the session
// expired, or the connection was suspended), the command is stopped and zkr exits
// with a code of its own, so that a script never takes a lost lock for success.
//
//	zkr [global flags] lock PATH [flags] [-- CMD ARGS...]
//	zkr [global flags] rlock PATH [flags] [-- CMD ARGS...]
//	zkr [global flags] wlock PATH [flags] [-- CMD ARGS...]
//	zkr [global flags] semaphore PATH --leases N [flags] [-- CMD ARGS...]
//	zkr [global flags] elect PATH [flags] -- CMD ARGS...
//	zkr [global flags] inspect PATH [--json] [--as group|value|count|counter] [--watch [--for D]]
//	zkr [global flags] inspect PATH --tree [--depth N] [--json]
//	zkr [global flags] services [PATH] [--json] [--watch [--for D]]
//	zkr [global flags] ui [PATH] [--listen ADDR] [--hold-warn D]
//	zkr [global flags] ensemble [--json]
//	zkr [global flags] ls [-R] [--json] PATH
//	zkr [global flags] get [--json] PATH
//	zkr [global flags] stat [--json] PATH
//	zkr [global flags] set [--version N] PATH DATA
//	zkr [global flags] create [-p] [--sequential|--container|--ttl D] PATH [DATA]
//	zkr [global flags] rm [-r] [--version N] PATH
//	zkr dev
//
// The nodes are those of the zkrecipes recipes, and so of Apache Curator: Go and
// Java processes can share a lock. ls, get, stat, set, create and rm are the
// ZooKeeper shell's, without Java. `zkr help COMMAND` tells the rest; the manual is
// docs/zkr.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// Exit codes. The child's own code is passed through when it ran; ours come from
// sysexits.h, which few programs use, so that a script can tell them apart.
const (
	exitOK        = 0
	exitUsage     = 64  // EX_USAGE: the command line is wrong
	exitData      = 65  // EX_DATAERR: the node is not as the command expects
	exitNoNode    = 66  // EX_NOINPUT: no node at PATH
	exitZooKeeper = 69  // EX_UNAVAILABLE: ZooKeeper unreachable, or a request failed
	exitExists    = 73  // EX_CANTCREAT: the node to create exists
	exitTimeout   = 75  // EX_TEMPFAIL: --timeout ran out while waiting; try again later
	exitLost      = 76  // the lock, lease or leadership was lost while held
	exitNoPerm    = 77  // EX_NOPERM: an ACL refused the request, or the server requires authentication
	exitCannotRun = 126 // CMD exists but could not be run, as in sh
	exitNotFound  = 127 // CMD not found, as in sh
	exitSignal    = 128 // + the signal's number: the child was killed by it, or zkr while waiting
)

// defaultSessionTimeout is the session timeout zkr asks for unless told: the
// library's own default (framework.WithSessionTimeout's, Curator's), so that zkr
// and a program built on the library hold their nodes alike.
// TestSessionTimeoutIsTheLibrarys holds the two equal.
const defaultSessionTimeout = 60 * time.Second

// exitCodesHelp is every command's exit codes, shown once, by `zkr help`.
const exitCodesHelp = `Exit codes:
  0         done. lock, rlock, wlock, semaphore without CMD: held, then released
            on SIGINT/SIGTERM/SIGHUP. inspect --watch, services --watch, ui, dev:
            ended by a signal (or --for)
  CMD's own lock, rlock, wlock, semaphore, elect: CMD ran and exited with it
  64        usage error: bad flag, missing or invalid PATH, bad --leases, elect
            without CMD
  65        the node is not as the command expects: another version (set, rm
            --version), children (rm without -r), another length (inspect --as
            count|counter)
  66        no node at PATH (inspect, ls, get, stat, set, rm; create's parent,
            without -p)
  69        ZooKeeper unreachable (after --connect-timeout) or a request failed;
            dev: ZooKeeper could not start; ui: the copy could not be loaded, or
            --listen's address cannot be listened on
  73        create: the node exists
  75        --timeout ran out while waiting; nothing was acquired
  76        the lock, lease or leadership was lost while held: CMD got SIGTERM,
            and SIGKILL after --grace (zkr never exits 0 then)
  77        an ACL refused the request, or the server requires authentication (see --auth, --auth-file, --acl, --sasl-mechanism)
  126, 127  CMD could not be run, or was not found
  128+N     CMD was killed by signal N; or zkr got signal N while waiting
`

// exitError ends a command with a code and a one-line message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Sprintf(format, args...)}
}

func zkError(format string, args ...any) error {
	return &exitError{exitZooKeeper, fmt.Sprintf(format, args...)}
}

// command is one of zkr's subcommands.
type command struct {
	name     string
	synopsis string // after "zkr [global flags] "
	summary  string // one line for `zkr --help`
	help     string // what it does, for `zkr NAME --help`
	example  string
	// flags registers the command's flags on fs and returns what runs it, with the
	// positional arguments, the command after "--", and whether there was a "--".
	flags func(fs *flag.FlagSet) func(env *env, pos, argv []string, dash bool) int
}

func findCommand(name string) *command {
	i := slices.IndexFunc(commands, func(c *command) bool { return c.name == name })
	if i < 0 {
		return nil
	}
	return commands[i]
}

// env is what every command works with: the global flags and the standard streams.
type env struct {
	cmd            string // "lock", "elect", ...
	servers        string
	sessionTimeout time.Duration
	connectTimeout time.Duration
	namespace      string
	auth           authFlags
	tls            tlsFlags
	sasl           saslFlags
	quiet, verbose bool
	stdin          io.Reader // DATA "-" (set, create)
	stdout, stderr io.Writer
	log            *slog.Logger
}

// globalFlags names the global flags, to list them apart in a command's help.
var globalFlags = map[string]bool{}

// globals registers the global flags on fs. They are accepted before the command
// and, for convenience, among its own flags too; the current values are the
// defaults, so that a second registration keeps what the first parsed.
func (e *env) globals(fs *flag.FlagSet) {
	fs.StringVar(&e.servers, "servers", e.servers,
		"ZooKeeper servers, a comma-separated `host:port` list (default $ZK_SERVERS, else 127.0.0.1:2181)")
	fs.DurationVar(&e.sessionTimeout, "session-timeout", e.sessionTimeout,
		fmt.Sprintf("session timeout to ask for, the library's default unless set; the server clamps it to its range (default %gs)",
			defaultSessionTimeout.Seconds()))
	fs.DurationVar(&e.connectTimeout, "connect-timeout", e.connectTimeout,
		"how long to wait for a session before giving up with exit code 69 (default 15s)")
	fs.StringVar(&e.namespace, "namespace", e.namespace,
		"put every path under /`NAMESPACE`, as Curator's namespace does (\"app\" or \"app/sub\")")
	e.auth.register(fs)
	e.tls.register(fs)
	e.sasl.register(fs)
	fs.BoolVar(&e.quiet, "quiet", e.quiet, "no progress line and no notices on stderr; errors still")
	fs.BoolVar(&e.verbose, "verbose", e.verbose, "log connection states and client details on stderr")
}

func main() {
	if isChildGuard() { // zkr started itself to guard a CMD (child_guard.go)
		runChildGuard()
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is zkr with its arguments and streams: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	servers := os.Getenv("ZK_SERVERS")
	if servers == "" {
		servers = "127.0.0.1:2181"
	}
	e := &env{cmd: "zkr", servers: servers, auth: authFlags{auth: os.Getenv("ZK_AUTH")}, sasl: saslFromEnv(), sessionTimeout: defaultSessionTimeout,
		connectTimeout: 15 * time.Second, stdin: os.Stdin, stdout: stdout, stderr: stderr}

	fs := flag.NewFlagSet("zkr", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.globals(fs)
	fs.VisitAll(func(f *flag.Flag) { globalFlags[f.Name] = true })
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			mainUsage(stdout, fs)
			return exitOK
		}
		return e.fail(usageError("%v (zkr --help shows usage)", err))
	}
	args = fs.Args()
	if len(args) == 0 {
		return e.fail(usageError("missing command (zkr --help lists them)"))
	}
	name := args[0]
	if name == "help" { // zkr help [COMMAND]
		if len(args) == 1 {
			mainUsage(stdout, fs)
			return exitOK
		}
		name, args = args[1], []string{args[1], "--help"}
	}
	c := findCommand(name)
	if c == nil {
		return e.fail(usageError("unknown command %q (zkr --help lists them)", name))
	}
	e.cmd = "zkr " + c.name
	return e.runCommand(c, args[1:])
}

func (e *env) runCommand(c *command, args []string) int {
	fs := flag.NewFlagSet(e.cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runFn := c.flags(fs)
	e.globals(fs)
	pos, argv, dash, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(e.stdout, c, fs)
			return exitOK
		}
		return e.fail(usageError("%v (%s --help shows usage)", err, e.cmd))
	}
	if e.sessionTimeout <= 0 || e.connectTimeout <= 0 {
		return e.fail(usageError("--session-timeout and --connect-timeout must be positive"))
	}
	e.log = e.logger()
	return runFn(e, pos, argv, dash)
}

// parseArgs parses a command's flags, which may come before or after its
// positional arguments, and splits off the command to run after "--".
func parseArgs(fs *flag.FlagSet, args []string) (pos, argv []string, dash bool, err error) {
	if i := slices.Index(args, "--"); i >= 0 {
		args, argv, dash = args[:i], args[i+1:], true
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, false, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, argv, dash, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// fail reports err on one line and returns its exit code.
func (e *env) fail(err error) int {
	code := exitZooKeeper
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	e.errorf("%v", err)
	return code
}

// errorf reports an error on stderr, --quiet or not.
func (e *env) errorf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "%s: %s\n", e.cmd, fmt.Sprintf(format, args...))
}

// notice is a line on stderr that --quiet silences.
func (e *env) notice(format string, args ...any) {
	if !e.quiet {
		fmt.Fprintf(e.stderr, "%s: %s\n", e.cmd, fmt.Sprintf(format, args...))
	}
}

// logger is where the client logs: nowhere, unless --verbose.
func (e *env) logger() *slog.Logger {
	if !e.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func mainUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `zkr: ZooKeeper locks, semaphores and leader election for shell scripts and cron,
and a ZooKeeper shell.

Usage: zkr [global flags] COMMAND [arguments] [-- CMD ARGS...]

Global flags go before or after the command.

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nGlobal flags:\n")
	printFlags(w, fs, true)
	fmt.Fprint(w, `
Example:
  */5 * * * * zkr --servers zk1:2181 lock /cron/backup --timeout 1m -- /usr/local/bin/backup.sh

Run "zkr help COMMAND" (or "zkr COMMAND --help") for a command's flags.

`+exitCodesHelp)
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: zkr [global flags] %s\n\n%s\n", c.synopsis, strings.TrimSpace(c.help))
	own := 0
	fs.VisitAll(func(f *flag.Flag) {
		if !globalFlags[f.Name] {
			own++
		}
	})
	if own > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, fs, false)
	}
	fmt.Fprintf(w, "\nExample:\n%s\n\nThe global flags (--servers, --namespace, --auth, TLS, ...) and the exit codes\nof every command: zkr help\n", c.example)
}

// printFlags lists fs's global or command flags, GNU style. Defaults are written in
// the usage strings themselves, since a global flag's registered default may be
// what was parsed before the command.
func printFlags(w io.Writer, fs *flag.FlagSet, global bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if globalFlags[f.Name] != global {
			return
		}
		typ, usage := flag.UnquoteUsage(f)
		if typ != "" {
			typ = " " + typ
		}
		fmt.Fprintf(w, "  --%s%s\n        %s\n", f.Name, typ, usage)
	})
}

// commands are zkr's subcommands, in the order --help lists them.
var commands = []*command{lockCmd, rlockCmd, wlockCmd, semaphoreCmd, electCmd, inspectCmd, servicesCmd, uiCmd,
	ensembleCmd, lsCmd, getCmd, statCmd, setCmd, createCmd, rmCmd, devCmd}
