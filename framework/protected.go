package framework

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// A protected node's name starts with a prefix that carries a random id, so that a
// client whose create failed with a connection loss can find out whether the node
// was made after all: it lists the parent and looks for its own id. The layout is
// Curator's, byte for byte, so Go and Java processes can share a lock:
//
//	_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007
//	^^^ marker (3) ^^^ UUID, lowercase, dashed (36) ^ "-" (1), then the name
//
// go-zookeeper's CreateProtectedEphemeralSequential writes "_c_" + 32 hex digits
// without dashes instead; Curator does not recognise such names as protected, and
// neither do we.
const (
	protectedMarker    = "_c_"
	protectedIDLen     = 36
	protectedPrefixLen = len(protectedMarker) + protectedIDLen + 1 // 40
)

// protectedPath returns the path under parent of a protected create of the node
// name (see protectedName), with a fresh id, and that id: a random UUID in the
// lowercase dashed form that Curator writes, of version 4, or of version 8 if
// anyoneReads (see saysAnyoneReads). Use one id per logical create and keep it
// across that create's retries, or the recovery cannot find the node. The path is
// made in one allocation, the id being a part of it: every lock's acquisition makes
// one.
func protectedPath(parent, name string, anyoneReads bool) (p, id string) {
	var u [16]byte
	_, _ = rand.Read(u[:]) // never fails (crypto/rand)
	version := byte(0x40)
	if anyoneReads {
		version = 0x80
	}
	u[6] = u[6]&0x0f | version
	u[8] = u[8]&0x3f | 0x80 // the variant of RFC 9562
	var dashed [protectedIDLen]byte
	hex.Encode(dashed[0:8], u[0:4])
	hex.Encode(dashed[9:13], u[4:6])
	hex.Encode(dashed[14:18], u[6:8])
	hex.Encode(dashed[19:23], u[8:10])
	hex.Encode(dashed[24:36], u[10:16])
	dashed[8], dashed[13], dashed[18], dashed[23] = '-', '-', '-', '-'

	var b strings.Builder
	b.Grow(len(parent) + 1 + protectedPrefixLen + len(name))
	b.WriteString(parent)
	if parent != "/" {
		b.WriteByte('/')
	}
	b.WriteString(protectedMarker)
	start := b.Len()
	b.Write(dashed[:])
	b.WriteByte('-')
	b.WriteString(name)
	p = b.String()
	return p, p[start : start+protectedIDLen]
}

// protectedName returns the protected form of the node name (the last path
// segment) for the given id. For a sequential create the name is the prefix the
// server appends the sequence number to, e.g. "lock-". With an empty name the
// result is only the 40-byte prefix, which IsProtectedName rejects, as Curator does,
// until the server has appended a sequence number.
func protectedName(id, name string) string {
	return protectedMarker + id + "-" + name
}

// IsProtectedName reports whether the node name (a last path segment, not a path)
// carries Curator's protection prefix: "_c_", a UUID in the canonical dashed form
// (either case, as Java's UUID parser accepts), "-", and at least one more
// character. Recipes use it to tell participants from other children; tools use it
// to find orphaned nodes.
func IsProtectedName(name string) bool {
	if len(name) <= protectedPrefixLen || !strings.HasPrefix(name, protectedMarker) ||
		name[protectedPrefixLen-1] != '-' {
		return false
	}
	// uuid.Parse takes a 36-byte input only in the dashed 8-4-4-4-12 form.
	_, err := uuid.Parse(name[len(protectedMarker) : protectedPrefixLen-1])
	return err == nil
}

// ProtectedID returns the UUID of a protected name, as written in it; ok is false
// if the name is not protected.
func ProtectedID(name string) (id string, ok bool) {
	if !IsProtectedName(name) {
		return "", false
	}
	return name[len(protectedMarker) : protectedPrefixLen-1], true
}

// StripProtection returns the name without its protection prefix: the name the
// creator asked for plus any sequence number, e.g. "lock-0000000007". A name that is
// not protected is returned unchanged.
func StripProtection(name string) string {
	if !IsProtectedName(name) {
		return name
	}
	return name[protectedPrefixLen:]
}

// A protected id of version 8 (RFC 9562's version for ids laid out as their maker
// chooses, random here as version 4's) says that its creator gave the node an ACL
// that lets anyone read it (world:anyone has READ). A waiter sees only the names of
// the nodes ahead of it, and must know this of the one it watches to watch it
// without reading it, in the request that sets its own node's watch
// (Plumbing.WatchDataSince): a server from 3.9.2 on delivers a node's notifications
// only to a session that may read it, and refuses the read, not the watch, to one
// that may not. Curator reads no more of an id than its text, and writes version 4:
// its nodes, and ours whose ACL keeps anyone from reading them, are watched with a
// read. A creator whose id says so of a node anyone may not read (or an ACL changed
// since) can only keep its waiter waiting, as a creator that never lets go can.
const anyoneReadsVersion = '8'

// protectedVersionAt is where the version digit of a protected name's id is.
const protectedVersionAt = len(protectedMarker) + 14

// saysAnyoneReads reports whether the node name is protected and its id says that
// anyone may read the node.
func saysAnyoneReads(name string) bool {
	return IsProtectedName(name) && name[protectedVersionAt] == anyoneReadsVersion
}
