package zktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startTimeout bounds how long a member may take to serve; Debian's ZooKeeper serves in
// about a second here, an ensemble reaches quorum in about two.
const startTimeout = 60 * time.Second

// member is one ZooKeeper java process: standalone, or one server of an ensemble.
type member struct {
	cfg        config
	java       string
	dir        string // owns data/, zoo.cfg and server.log; removed by close
	myid       int    // 0 when standalone
	clientPort int
	securePort int        // 0 without TLS
	tls        *serverTLS // nil without TLS
	peerPort   int
	electPort  int

	mu      sync.Mutex
	host    string // the client address's IP; "" for 127.0.0.1 (address.go)
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current process has been reaped
	version string        // what the server said it runs when it last started
}

// memberPorts are the ports of one member; those it does not use are 0.
type memberPorts struct{ client, secure, peer, elect int }

func newMember(cfg config, java, dir string, myid int, ports memberPorts, tls *serverTLS) *member {
	return &member{cfg: cfg, java: java, dir: dir, myid: myid, tls: tls,
		clientPort: ports.client, securePort: ports.secure, peerPort: ports.peer, electPort: ports.elect}
}

func (m *member) addr() string {
	return net.JoinHostPort(m.clientHost(), strconv.Itoa(m.clientPort))
}

// secureAddr is "" without TLS.
func (m *member) secureAddr() string {
	if m.tls == nil {
		return ""
	}
	return loopback(m.securePort)
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// writeConfig writes zoo.cfg; peers holds the server.N lines of an ensemble, as this
// member sees them (its own real ports, the others' through the routes).
func (m *member) writeConfig(peers []string) error {
	dataDir := filepath.Join(m.dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	if m.myid > 0 {
		if err := os.WriteFile(filepath.Join(dataDir, "myid"), []byte(strconv.Itoa(m.myid)+"\n"), 0o644); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
	}
	tick := m.cfg.tickTime.Milliseconds()
	lines := []string{
		"tickTime=" + strconv.FormatInt(tick, 10),
		"initLimit=10",
		"syncLimit=5",
		"dataDir=" + dataDir,
		"clientPort=" + strconv.Itoa(m.clientPort),
		"clientPortAddress=" + m.clientHost(),
		"admin.enableServer=false",
		"maxClientCnxns=0",
		"4lw.commands.whitelist=ruok,srvr,stat,mntr,wchs,wchc,wchp,cons,conf,dump",
		// The tests' durability needs are met by the page cache: a killed java process
		// loses nothing that the kernel holds, and fsyncs would only slow every write.
		"forceSync=no",
	}
	if m.cfg.minSession > 0 {
		lines = append(lines, "minSessionTimeout="+strconv.FormatInt(m.cfg.minSession.Milliseconds(), 10))
	}
	if m.cfg.maxSession > 0 {
		lines = append(lines, "maxSessionTimeout="+strconv.FormatInt(m.cfg.maxSession.Milliseconds(), 10))
	}
	if m.tls != nil {
		tlsLines, err := m.tls.configLines(m.dir, m.securePort)
		if err != nil {
			return err
		}
		lines = append(lines, tlsLines...)
	}
	if err := m.cfg.secured.writeJAAS(m.dir); err != nil {
		return err
	}
	lines = append(lines, m.cfg.secured.configLines()...)
	lines = append(lines, peers...)
	lines = append(lines, m.cfg.extra...)
	return os.WriteFile(m.configPath(), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func (m *member) configPath() string { return filepath.Join(m.dir, "zoo.cfg") }
func (m *member) logPath() string    { return filepath.Join(m.dir, "server.log") }

// launch starts the java process without waiting for it to serve.
func (m *member) launch() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		return errors.New("zktest: server is already running")
	}
	logFile, err := os.OpenFile(m.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	args := append([]string{
		"-Xmx" + strconv.Itoa(m.cfg.heapMB) + "m",
		"-XX:+UseSerialGC",
		"-Dzookeeper.jmx.log4j.disable=true",
		// Each line of server.log says when, to line it up with a test's own record.
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
		"-Dznode.container.checkIntervalMs=" + strconv.FormatInt(m.cfg.containerInterval.Milliseconds(), 10),
	}, m.cfg.secured.jvmArgs(m.dir)...)
	args = append(args, "-cp", m.cfg.install.classPath(),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", m.configPath())
	cmd := exec.Command(m.java, args...)
	cmd.Dir = m.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// If the test binary dies without cleaning up, the kernel kills the server too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("zktest: starting java: %w", err)
	}
	exited := make(chan struct{})
	m.cmd, m.exited = cmd, exited
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	return nil
}

// waitServing polls srvr until the member serves clients, as standalone, leader or
// follower. A process that exits first fails at once, with the tail of its log.
func (m *member) waitServing(ctx context.Context) error {
	m.mu.Lock()
	exited := m.exited
	m.mu.Unlock()
	if exited == nil {
		return errors.New("zktest: server is not running")
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		// A probe that comes too early is never answered (the server fails on it and
		// leaves the socket open), so each probe gets a short deadline of its own.
		probe, cancelProbe := context.WithTimeout(ctx, 250*time.Millisecond)
		mode, version, _ := m.srvr(probe)
		ours := mode != "" && m.answersFromOurDir(probe)
		cancelProbe()
		if ours && m.tlsServes(ctx) {
			return m.checkVersion(version)
		}
		select {
		case <-exited:
			return fmt.Errorf("zktest: server %s exited during start-up; its log ends:\n%s", m.addr(), m.logTail(40))
		case <-ctx.Done():
			return fmt.Errorf("zktest: server %s did not serve: %w; its log ends:\n%s", m.addr(), ctx.Err(), m.logTail(40))
		case <-tick.C:
		}
	}
}

// answersFromOurDir says whether the server that answers at the member's address
// is the member, by the data directory its conf names. The member's ports are free
// when they are chosen and only bound once the JVM has started: a server started
// meanwhile by another test (another package's, or a parallel test's) can take the
// client port first. The member then exits at once ("Address already in use", and
// startMembers tries other ports), but that server answered srvr for it before
// this check, and an ensemble was started with a member dead.
func (m *member) answersFromOurDir(ctx context.Context) bool {
	out, err := fourLetter(ctx, m.addr(), "conf")
	if err != nil {
		return false
	}
	data := filepath.Join(m.dir, "data")
	for _, line := range strings.Split(out, "\n") {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(line), "dataDir="); ok {
			return dir == data || strings.HasPrefix(dir, data+"/")
		}
	}
	return false
}

// mode is "standalone", "leader" or "follower" while the member serves, else "".
func (m *member) mode(ctx context.Context) (string, error) {
	mode, _, err := m.srvr(ctx)
	return mode, err
}

// srvr asks the member for its mode and its version, the number of
// "Zookeeper version: 3.9.6-<git hash>, built on ...".
func (m *member) srvr(ctx context.Context) (mode, version string, err error) {
	out, err := fourLetter(ctx, m.addr(), "srvr")
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Zookeeper version: "); ok {
			version, _, _ = strings.Cut(v, ",")
			version, _, _ = strings.Cut(version, "-")
		}
		if v, ok := strings.CutPrefix(line, "Mode: "); ok {
			mode = strings.TrimSpace(v)
		}
	}
	return mode, strings.TrimSpace(version), nil
}

// checkVersion fails a start whose server is not the version whose jars were chosen:
// the class path let another version's classes in first.
func (m *member) checkVersion(version string) error {
	if want := m.cfg.install.version; version != want {
		return fmt.Errorf("zktest: server %s reports ZooKeeper %q, but was started from %s's jars in %s: another version's classes come first on its class path",
			m.addr(), version, want, m.cfg.install.dir)
	}
	m.mu.Lock()
	m.version = version
	m.mu.Unlock()
	return nil
}

func (m *member) serverVersion() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// stop kills the process and reaps it. A killed ZooKeeper loses nothing it acknowledged
// (the kernel still holds its writes), so this is a faithful crash and a fast one.
func (m *member) stop() {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.cmd, m.exited = nil, nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

func (m *member) pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

func (m *member) logTail(n int) string {
	data, err := os.ReadFile(m.logPath())
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// bindFailed tells a lost race for a port (another process took it between our probe
// and the server's bind) from a real failure, so that the caller can try other ports.
func (m *member) bindFailed() bool {
	data, _ := os.ReadFile(m.logPath())
	return bytes.Contains(data, []byte("Address already in use"))
}

// freePorts finds n distinct loopback ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	ports, release, err := reservePorts(n)
	release()
	return ports, err
}

// reservePorts finds n distinct loopback ports and keeps listening on them until
// release, so that nothing of ours that listens on "any free port" meanwhile (a
// route's proxy) is handed one of them. A member binds its quorum port only when it
// leads, possibly long after it starts: a proxy given that port would stop it from
// ever leading. release may be called more than once.
func reservePorts(n int) (ports []int, release func(), err error) {
	var ls []net.Listener
	release = sync.OnceFunc(func() {
		for _, l := range ls {
			l.Close()
		}
	})
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			release()
			return nil, func() {}, fmt.Errorf("zktest: finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, release, nil
}
