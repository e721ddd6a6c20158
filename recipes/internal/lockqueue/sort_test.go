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
		{"lock--2147483648", "-2147483648", true},    // where the counter wraps to
		{"lock-2147483647", "2147483647", true},
		{"lock-12", "", false}, // too short to be the server's
		{"lock-000000000x", "", false},
		{"lock-+000000001", "", false},
		{"lock-00000000001", "", false},                                   // the server pads to ten characters, no more
		{"lock--0000000001", "", false},                                   // nor a negative number
		{"lock--000000000", "", false},                                    // no negative zero
		{"lock- 000000001", "", false},                                    // no space
		{"lock-2147483648", "", false},                                    // beyond int32
		{"lock--2147483649", "", false},                                   // below int32
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

func TestSortChildrenFollowsTheCounterRoundItsWrap(t *testing.T) {
	// The counter counts every create and delete of a child; past 2147483647 it
	// goes on at -2147483648. Sorted as text, the newest node would come first.
	children := []string{"lock--2147483647", "lock-2147483646", "lock--2147483648", "lock-2147483647"}
	require.Equal(t, []string{"lock-2147483646", "lock-2147483647", "lock--2147483648", "lock--2147483647"},
		SortChildren(children, []string{"lock-"}))
	children = []string{"lock-0000000001", "lock--000000001", "lock-0000000000", "lock--000000002"}
	require.Equal(t, []string{"lock--000000002", "lock--000000001", "lock-0000000000", "lock-0000000001"},
		SortChildren(children, []string{"lock-"}))
}

func TestRules(t *testing.T) {
	queue := []string{"a", "b", "c", "d"}
	holds, _ := Exclusive(queue, 0)
	require.True(t, holds)
	holds, watch := Exclusive(queue, 2)
	require.False(t, holds)
	require.Equal(t, 1, watch, "a waiter watches the node just before it")

	three := Leases(3)
	holds, _ = three(queue, 2)
	require.True(t, holds)
	holds, watch = three(queue, 3)
	require.False(t, holds)
	require.Equal(t, 0, watch, "the fourth watches the first")
}

// Order's verdict on each participant is the one that participant's own decide
// reaches, around the counter's wrap too: a tool showing the queue names the
// holder the recipe granted.
func TestOrderAgreesWithDecide(t *testing.T) {
	rw := []string{"read-", "write-"}
	for _, tc := range []struct {
		children []string
		names    []string
		rule     Rule
	}{
		{[]string{"lock--2147483647", "lock-2147483646", "lock--2147483648", "lock-2147483647"}, []string{"lock-"}, Exclusive},
		{[]string{"lock-0000000001", "lock--000000001", "lock-0000000000", "lock--000000002"}, []string{"lock-"}, Exclusive},
		{[]string{"x-read--2147483647", "x-write--2147483648", "x-read-2147483647", "x-read-2147483646"}, rw, ReadWrite("write-")},
		{[]string{"x-write-2147483647", "x-read--2147483648", "x-write--2147483647"}, rw, ReadWrite("write-")},
		{[]string{"lease--2147483647", "lease-2147483647", "lease--2147483648"}, []string{"lease-"}, Leases(2)},
	} {
		sorted, holds := Order(tc.children, tc.names, tc.rule)
		require.Len(t, sorted, len(tc.children))
		for i, node := range sorted {
			want, _, _, err := decide(tc.children, tc.names, node, tc.rule)
			require.NoError(t, err)
			require.Equal(t, want, holds[i], "%s in %v", node, tc.children)
		}
	}
}
