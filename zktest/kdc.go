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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// KDCRealm is the realm of every KDC that zktest starts.
const KDCRealm = "ZKR.TEST"

// The principals a KDC is made with: the servers' (ZooKeeper's Java client asks for a
// ticket to zookeeper/<the host it connected to>, and zktest's servers serve
// localhost and 127.0.0.1, which a client names localhost) and one client's.
const (
	KDCServerPrincipal = "zookeeper/localhost"
	KDCClientPrincipal = "client"
)

// kdcTools are the MIT Kerberos programs a KDC is made and run with, from Debian's
// krb5-kdc and krb5-admin-server (make deps installs them).
var kdcTools = []string{"kdb5_util", "kadmin.local", "krb5kdc"}

// KDC is a throwaway Kerberos key distribution center on a loopback port: MIT's
// krb5kdc as a child process, with a realm (KDCRealm) and a database of its own in a
// temporary directory, the servers' principal and a client's, each with a keytab.
type KDC struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when krb5kdc has been reaped

	mu     sync.Mutex // serializes AddPrincipal
	closed sync.Once
}

// NewKDC starts a KDC for the test and registers its Close with tb.Cleanup. A KDC
// starts in a fraction of a second, but a package whose tests all use one starts it
// once, in TestMain, with StartKDC.
func NewKDC(tb testing.TB) *KDC {
	tb.Helper()
	k, err := StartKDC(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = k.Close() })
	return k
}

// StartKDC makes a realm's database with the servers' and the client's principals and
// keytabs, starts krb5kdc on a free loopback port and returns once it answers. The
// caller must Close it. Without MIT Kerberos's KDC installed it fails with the
// command that installs it.
func StartKDC(ctx context.Context) (*KDC, error) {
	for _, tool := range kdcTools {
		if _, err := lookTool(tool); err != nil {
			return nil, fmt.Errorf("%w; a KDC needs it (Debian's krb5-kdc and krb5-admin-server): run make deps", err)
		}
	}
	dir, err := os.MkdirTemp("", "zktest-kdc-")
	if err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	k := &KDC{dir: dir}
	if err := k.start(ctx); err != nil {
		_ = k.Close()
		return nil, err
	}
	return k, nil
}

func (k *KDC) start(ctx context.Context) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	k.port = ports[0]
	if err := k.writeConfig(); err != nil {
		return err
	}
	if err := k.run(ctx, "kdb5_util", "create", "-s", "-r", KDCRealm, "-P", "zktest-master"); err != nil {
		return err
	}
	if err := k.addPrincipals(ctx, KDCServerPrincipal, KDCClientPrincipal); err != nil {
		return err
	}
	kdc, _ := lookTool("krb5kdc")
	logFile, err := os.Create(filepath.Join(k.dir, "krb5kdc.out"))
	if err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	// -n: in the foreground, a child of ours to stop; its log goes to kdc.log (kdc.conf).
	cmd := exec.Command(kdc, "-n", "-P", filepath.Join(k.dir, "kdc.pid"))
	cmd.Env = k.env()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("zktest: starting krb5kdc: %w", err)
	}
	k.cmd, k.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(k.done)
	}()
	return k.waitServing(ctx)
}

// waitServing waits until the KDC accepts connections on its TCP port, or exits.
func (k *KDC) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		if c, err := d.DialContext(ctx, "tcp", k.Addr()); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-k.done:
			return fmt.Errorf("zktest: krb5kdc exited during start-up: %s", k.logTail())
		case <-ctx.Done():
			return fmt.Errorf("zktest: krb5kdc did not serve on %s: %w: %s", k.Addr(), ctx.Err(), k.logTail())
		case <-tick.C:
		}
	}
}

func (k *KDC) writeConfig() error {
	krb5 := fmt.Sprintf(`[libdefaults]
  default_realm = %[1]s
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  udp_preference_limit = 1
[realms]
  %[1]s = {
    kdc = %[2]s
  }
`, KDCRealm, k.Addr())
	kdc := fmt.Sprintf(`[kdcdefaults]
  kdc_listen = %[2]s
  kdc_tcp_listen = %[2]s
[realms]
  %[1]s = {
    database_name = %[3]s
    key_stash_file = %[4]s
    acl_file = %[5]s
    max_life = 1h
  }
[logging]
  kdc = FILE:%[6]s
`, KDCRealm, k.Addr(), filepath.Join(k.dir, "principal"), filepath.Join(k.dir, "stash"),
		filepath.Join(k.dir, "kadm5.acl"), filepath.Join(k.dir, "kdc.log"))
	for name, text := range map[string]string{"krb5.conf": krb5, "kdc.conf": kdc, "kadm5.acl": ""} {
		if err := os.WriteFile(filepath.Join(k.dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
	}
	return nil
}

// env points MIT's tools at this KDC's files and nothing of the machine's.
func (k *KDC) env() []string {
	return append(os.Environ(),
		"KRB5_CONFIG="+k.Krb5Conf(),
		"KRB5_KDC_PROFILE="+filepath.Join(k.dir, "kdc.conf"),
		"KRB5CCNAME=FILE:"+filepath.Join(k.dir, "ccache"))
}

// run runs one of MIT's tools on this KDC's files.
func (k *KDC) run(ctx context.Context, tool string, args ...string) error {
	path, err := lookTool(tool)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = k.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("zktest: %s %s: %w: %s", tool, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// addPrincipals adds principals with random keys and writes each one's keytab, in
// one kadmin.local run. The caller holds k.mu, or has the KDC to itself.
func (k *KDC) addPrincipals(ctx context.Context, names ...string) error {
	var script strings.Builder
	for _, name := range names {
		fmt.Fprintf(&script, "addprinc -randkey %s@%s\nktadd -k %s %s@%s\n",
			name, KDCRealm, k.keytab(name), name, KDCRealm)
	}
	path, err := lookTool("kadmin.local")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = k.env()
	cmd.Stdin = strings.NewReader(script.String())
	out, err := cmd.CombinedOutput()
	if err == nil {
		for _, name := range names {
			if !fileExists(k.keytab(name)) {
				err = fmt.Errorf("no keytab for %s", name)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("zktest: kadmin.local adding %s: %w: %s", strings.Join(names, ", "), err, bytes.TrimSpace(out))
	}
	return nil
}

// AddPrincipal adds a principal ("alice", or "service/host") to the realm with a
// random key, and returns the path of its keytab. Adding one that exists is an error.
func (k *KDC) AddPrincipal(ctx context.Context, name string) (keytab string, err error) {
	if name == "" || strings.ContainsAny(name, "@ \n\"") {
		return "", fmt.Errorf("zktest: bad principal name %q (a name without its realm)", name)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// kadmin.local would give an existing principal a new key, and its keytab would
	// no longer log in.
	if fileExists(k.keytab(name)) {
		return "", fmt.Errorf("zktest: principal %s exists", name)
	}
	if err := k.addPrincipals(ctx, name); err != nil {
		return "", err
	}
	return k.keytab(name), nil
}

func (k *KDC) keytab(name string) string {
	return filepath.Join(k.dir, strings.ReplaceAll(name, "/", "_")+".keytab")
}

// Addr is the KDC's address, "127.0.0.1:port", on TCP and UDP.
func (k *KDC) Addr() string { return loopback(k.port) }

// Krb5Conf is the path of a krb5.conf that names this KDC for KDCRealm (its default
// realm) and has clients use TCP: what KRB5_CONFIG, Java's java.security.krb5.conf
// and gokrb5's config.Load read.
func (k *KDC) Krb5Conf() string { return filepath.Join(k.dir, "krb5.conf") }

// ServerKeytab is the keytab of KDCServerPrincipal, which servers started
// WithKerberos log in with.
func (k *KDC) ServerKeytab() string { return k.keytab(KDCServerPrincipal) }

// ClientKeytab is the keytab of KDCClientPrincipal.
func (k *KDC) ClientKeytab() string { return k.keytab(KDCClientPrincipal) }

func (k *KDC) logTail() string {
	data, _ := os.ReadFile(filepath.Join(k.dir, "kdc.log"))
	out, _ := os.ReadFile(filepath.Join(k.dir, "krb5kdc.out"))
	return strings.TrimSpace(string(data) + string(out))
}

// Close stops the KDC and removes its directory. It is idempotent.
func (k *KDC) Close() error {
	var err error
	k.closed.Do(func() {
		if k.cmd != nil {
			_ = k.cmd.Process.Kill()
			<-k.done
		}
		err = os.RemoveAll(k.dir)
	})
	return err
}

// lookTool finds one of MIT's programs, which Debian puts in /usr/sbin, a directory
// not every PATH has.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p, nil
		}
	}
	return "", errors.New("zktest: " + name + " is not installed")
}
