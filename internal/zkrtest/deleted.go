package zkrtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
)

// DeleteHolder deletes a holder's node as an operator or a script would: from op,
// another client, in a live session of the holder's.
func DeleteHolder(t testing.TB, op *framework.Client, node string) {
	t.Helper()
	require.NotEmpty(t, node, "the holder has a node")
	require.NoError(t, op.Delete(Context(t), node, -1))
}

// RequireLostToDeletion checks that work, a hold's context, has ended with a cause
// that wraps lost (the recipe's ErrLost or its like) and says the node was deleted.
func RequireLostToDeletion(t testing.TB, work context.Context, lost error) {
	t.Helper()
	require.Error(t, work.Err(), "the hold's context has ended")
	cause := context.Cause(work)
	require.ErrorIs(t, cause, lost)
	require.ErrorIs(t, cause, framework.ErrNoNode, "the cause says the node went: %v", cause)
	require.ErrorContains(t, cause, "deleted")
}

// QueueLen waits until the queue at p has n participants.
func QueueLen(t testing.TB, c *framework.Client, p string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		names, err := List(c, p)
		return err == nil && len(names) == n
	}, Wait, 5*time.Millisecond, "%s never had %d participants", p, n)
}
