package nodewrite

import (
	"testing"

	"github.com/zkrecipes/zkrecipes/framework"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Only the next version of the same node, holding another writer's data, proves
// that our write conditional on the version before did not apply. (The writes
// themselves are tested where they are used: recipes/counter's faults_test.go.)
func TestTookVersion(t *testing.T) {
	before := &framework.Stat{Czxid: 7, Version: 4}
	ours, theirs := []byte("ours"), []byte("theirs")
	require.True(t, TookVersion(before, &framework.Stat{Czxid: 7, Version: 5}, theirs, ours))
	require.False(t, TookVersion(before, &framework.Stat{Czxid: 7, Version: 5}, ours, ours), "ours, or a twin's")
	require.False(t, TookVersion(before, &framework.Stat{Czxid: 7, Version: 6}, theirs, ours), "a version between unseen")
	require.False(t, TookVersion(before, &framework.Stat{Czxid: 7, Version: 4}, theirs, ours), "not moved on")
	require.False(t, TookVersion(before, &framework.Stat{Czxid: 9, Version: 5}, theirs, ours), "another node at the path")
	require.False(t, TookVersion(&framework.Stat{Version: 0}, &framework.Stat{Czxid: 9, Version: 1}, theirs, ours), "czxid unknown")
	require.False(t, TookVersion(before, nil, nil, ours), "node gone")
	wrap := &framework.Stat{Czxid: 7, Version: 1<<31 - 1}
	require.True(t, TookVersion(wrap, &framework.Stat{Czxid: 7, Version: -1 << 31}, theirs, ours), "the version wraps as the server's does")
}
