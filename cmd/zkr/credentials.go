package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Credentials on the command line are seen by every local user (ps), so zkr also
// takes them from its environment ($ZK_AUTH, which only their owner can read in
// /proc) and from a file (--auth-file), which zkr refuses if others can read it.

// authFlags are the global flags for credentials and the ACL of zkr's nodes.
type authFlags struct {
	auth string // --auth, else $ZK_AUTH
	file string // --auth-file
	acl  string // --acl (acl.go)
}

func (a *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.auth, "auth", a.auth, "credentials to send, as `scheme:credentials` (e.g. \"digest:user:password\"); "+
		"ps shows them to every local user: prefer $ZK_AUTH or --auth-file (default $ZK_AUTH)")
	fs.StringVar(&a.file, "auth-file", a.file, "send the credentials in this `file`, one scheme:credentials a line "+
		"(# comments); refused if other users can read it or its group can write it")
	fs.StringVar(&a.acl, "acl", a.acl, "the `ACL` of the nodes zkr creates: world, creator, or a list of "+
		"scheme:id:perms (e.g. \"creator,world:anyone:r\") (default creator with credentials, else world)")
}

// credential is one scheme:credentials pair.
type credential struct{ scheme, secret string }

// options are the client options for the credentials and the ACL.
func (a *authFlags) options() ([]framework.Option, error) {
	creds, err := a.credentials()
	if err != nil {
		return nil, err
	}
	var opts []framework.Option
	for _, c := range creds {
		opts = append(opts, framework.WithAuth(c.scheme, []byte(c.secret)))
	}
	acl, err := parseACL(a.acl, len(creds) > 0)
	if err != nil {
		return nil, err
	}
	return append(opts, framework.WithACL(framework.FixedACL(acl...))), nil
}

// credentials are --auth's (else $ZK_AUTH's) and the lines of --auth-file. No
// message quotes them: they are secrets.
func (a *authFlags) credentials() ([]credential, error) {
	var creds []credential
	if a.auth != "" {
		c, ok := parseCredential(a.auth)
		if !ok {
			return nil, usageError("--auth wants scheme:credentials (so does $ZK_AUTH)")
		}
		creds = append(creds, c)
	}
	if a.file == "" {
		return creds, nil
	}
	data, err := readPrivate("--auth-file", a.file)
	if err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; lines.Scan(); n++ {
		line := strings.TrimSpace(lines.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, ok := parseCredential(line)
		if !ok {
			return nil, usageError("--auth-file %s, line %d: want scheme:credentials", a.file, n)
		}
		creds = append(creds, c)
	}
	if len(creds) == 0 {
		return nil, usageError("--auth-file %s: no credentials in it", a.file)
	}
	return creds, nil
}

func parseCredential(s string) (credential, bool) {
	scheme, secret, ok := strings.Cut(s, ":")
	return credential{scheme, secret}, ok && scheme != "" && secret != ""
}

// readPrivate reads a file of secrets, unless users other than its owner (and its
// group, for reading: chmod 640 shares it with a service's group) can read or
// change it, as ssh refuses a private key others can read.
func readPrivate(what, name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, usageError("%s: %v", what, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, usageError("%s: %v", what, err)
	}
	if perm := st.Mode().Perm(); perm&0o026 != 0 {
		return nil, usageError("%s %s: other users can read or change it (mode %#o): chmod 600 it (640 to share it with its group)", what, name, perm)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, usageError("%s: %v", what, err)
	}
	return data, nil
}
