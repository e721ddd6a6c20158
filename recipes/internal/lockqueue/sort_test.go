package lockqueue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSequence(t *testing.T) {
	lock := []string{"lock-"}
	for _, tt := range []struct {
		child string
		seq   string
		ok    bool
	}{
		{"_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007", "0000000007", true},
		{"lock-0000000042", "0000000042", true},
		{"lock-lock-0000000001", "0000000001", true}, // after the last occurrence
		{"lock--000000001", "-000000001", true},      // the server's sequence past 2^31
		{"lock-12", "", false},                       // too short to be the server's
		{"lock-000000000x", "", false},
		{"lock-+000000001", "", false},
		{"lock-99999999999", "", false},                                   // beyond int32
		{"0f8fad5bd9cb469fa16570867728950e__lock__0000000001", "", false}, // kazoo's
		{"foreign", "", false},
		{"", "", false},
	} {
		seq, ok := Sequence(tt.child, lock)
		require.Equal(t, tt.ok, ok, tt.child)
		require.Equal(t, tt.seq, seq, tt.child)
	}
}

func TestSortChildrenOrdersBySequenceAndDropsStrangers(t *testing.T) {
	children := []string{
		"_c_bbbbbbbb-d9cb-469f-a165-70867728950e-lock-0000000003",
		"foreign-node",
		"_c_aaaaaaaa-d9cb-469f-a165-70867728950e-lock-0000000010",
		"lock-0000000001",
		"_c_cccccccc-d9cb-469f-a165-70867728950e-lock-0000000002",
	}
	require.Equal(t, []string{
		"lock-0000000001",
		"_c_cccccccc-d9cb-469f-a165-70867728950e-lock-0000000002",
		"_c_bbbbbbbb-d9cb-469f-a165-70867728950e-lock-0000000003",
		"_c_aaaaaaaa-d9cb-469f-a165-70867728950e-lock-0000000010",
	}, SortChildren(children, []string{"lock-"}))
}

func TestSortChildrenMixesNamesBySequence(t *testing.T) {
	children := []string{"x-write-0000000002", "x-read-0000000003", "x-read-0000000001"}
	require.Equal(t, []string{"x-read-0000000001", "x-write-0000000002", "x-read-0000000003"},
		SortChildren(children, []string{"read-", "write-"}))
}

func TestRules(t *testing.T) {
	queue := []string{"a", "b", "c", "d"}
	holds, watch := Exclusive(queue, 0)
	require.True(t, holds)
	holds, watch = Exclusive(queue, 2)
	require.False(t, holds)
	require.Equal(t, 1, watch, "a waiter watches the node just before it")

	three := Leases(3)
	holds, _ = three(queue, 2)
	require.True(t, holds)
	holds, watch = three(queue, 3)
	require.False(t, holds)
	require.Equal(t, 0, watch, "the fourth watches the first")
}

func FuzzSortChildren(f *testing.F) {
	f.Add("lock-0000000001", "lock-0000000000", "garbage")
	f.Add("_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007", "lock-", "lock--000000001")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		sorted := SortChildren([]string{a, b, c}, []string{"lock-"})
		for i, name := range sorted {
			seq, ok := Sequence(name, []string{"lock-"})
			require.True(t, ok, "only participants are kept")
			if i > 0 {
				prev, _ := Sequence(sorted[i-1], []string{"lock-"})
				require.LessOrEqual(t, prev, seq)
			}
		}
	})
}
