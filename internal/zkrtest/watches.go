package zkrtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// DataWatches lists, sorted, the paths srv holds data watches on for session (wchc,
// which shows data and existence watches, not child watches).
func DataWatches(t testing.TB, srv *zktest.Server, session int64) []string {
	t.Helper()
	out, err := srv.FourLetter(Context(t), "wchc")
	require.NoError(t, err)
	watches := WatchesBySession(out)[fmt.Sprintf("0x%x", session)]
	slices.Sort(watches)
	return watches
}

// WatchesBySession reads wchc's answer: the paths each session ("0x…") watches, in
// the order listed.
func WatchesBySession(wchc string) map[string][]string {
	bySession := map[string][]string{}
	session := ""
	for _, line := range strings.Split(wchc, "\n") {
		p := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "0x"):
			session = p
			bySession[session] = nil
		case session != "" && strings.HasPrefix(p, "/"):
			bySession[session] = append(bySession[session], p)
		}
	}
	return bySession
}
