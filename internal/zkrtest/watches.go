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
	var watches []string
	mine := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			mine = line == fmt.Sprintf("0x%x", session)
		case mine && strings.TrimSpace(line) != "":
			watches = append(watches, strings.TrimSpace(line))
		}
	}
	slices.Sort(watches)
	return watches
}
