package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What zkr shows of ZooKeeper's data (participant ids, payloads, service
// instances, node names) was written by any client with write access. On a
// terminal, control characters in it would be obeyed: cursor moves that hide or
// forge lines, OSC 52 that sets the clipboard, a title, a bell. So every printer
// passes such text through printable, and JSON output through escapeJSON.

// printable is s with control characters (C0, DEL, C1), Unicode's bidirectional
// controls (which reorder what follows) and bytes that are not UTF-8 written as Go
// escapes: "\x1b", "\u202e", "\xff". Other text, any script's, is left as it is.
func printable(s string) string { return escape(s, false) }

// printableText is printable but keeps newlines and tabs, for data shown whole
// (zkr get on a terminal).
func printableText(s string) string { return escape(s, true) }

func escape(s string, text bool) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return obeyed(r, text) }) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case obeyed(r, text) && r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case obeyed(r, text):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// obeyed tells whether a terminal would obey r rather than show it.
func obeyed(r rune, text bool) bool {
	if text && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// escapeJSON escapes, in encoding/json's output, what encoding/json leaves as it is
// and a terminal would obey: DEL, the C1 controls and the bidirectional controls
// (it escapes the C0 controls itself). JSON's structure is ASCII, so these can only
// be in strings, where \u escapes stand for the same text: a script reads the same
// data.
func escapeJSON(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r >= 0x7f && obeyed(r, false) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, data[:n]...)
		}
		data = data[n:]
	}
	return out
}
