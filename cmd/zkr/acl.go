package main

import (
	"strings"

	"github.com/zkrecipes/zkrecipes/framework"
)

// The ACL of every node zkr creates (lock, lease and election nodes, their parents,
// create's): --acl, else the creator's alone when zkr has credentials, so that a
// client without them can neither delete a holder's node nor enter its queue; else
// open to all, Curator's default, since ZooKeeper has no other identity for a
// client without credentials.

// perms are ZooKeeper's permission letters, as zkCli writes them.
var perms = map[rune]int32{
	'c': framework.PermCreate, 'd': framework.PermDelete, 'r': framework.PermRead,
	'w': framework.PermWrite, 'a': framework.PermAdmin,
}

// parseACL reads --acl: "world" (anyone may do anything), "creator" (whoever created
// the node, as authenticated), or a comma-separated list of those and of
// scheme:id:perms entries ("digest:alice:<hash>:cdrwa,world:anyone:r"). Empty, it is
// creator with credentials, else world.
func parseACL(s string, withCredentials bool) ([]framework.ACL, error) {
	if s == "" {
		s = "world"
		if withCredentials {
			s = "creator"
		}
	}
	var acl []framework.ACL
	for _, entry := range strings.Split(s, ",") {
		switch entry = strings.TrimSpace(entry); entry {
		case "world":
			acl = append(acl, framework.WorldACL(framework.PermAll)...)
		case "creator":
			if !withCredentials {
				return nil, usageError("--acl creator needs credentials (--auth, $ZK_AUTH or --auth-file): ZooKeeper knows no creator without them")
			}
			acl = append(acl, framework.AuthACL(framework.PermAll)...)
		default:
			a, err := parseACLEntry(entry)
			if err != nil {
				return nil, err
			}
			acl = append(acl, a)
		}
	}
	return acl, nil
}

// parseACLEntry reads scheme:id:perms; the id may hold colons (digest's user:hash).
func parseACLEntry(entry string) (framework.ACL, error) {
	scheme, rest, ok1 := strings.Cut(entry, ":")
	i := strings.LastIndexByte(rest, ':')
	if !ok1 || i < 0 || scheme == "" || i == len(rest)-1 {
		return framework.ACL{}, usageError("--acl: %q is not world, creator or scheme:id:perms", entry)
	}
	a := framework.ACL{Scheme: scheme, ID: rest[:i]}
	for _, p := range rest[i+1:] {
		bit, ok := perms[p]
		if !ok {
			return framework.ACL{}, usageError("--acl: %q: permissions are letters of cdrwa, not %q", entry, p)
		}
		a.Perms |= bit
	}
	return a, nil
}
