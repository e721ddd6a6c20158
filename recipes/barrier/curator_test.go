package barrier

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// A Java DistributedDoubleBarrier and Go members enter and leave together: the
// same nodes, the same ready node, the same order of leaving.
func TestDoubleWithCurator(t *testing.T) {
	srv := zkrtest.Server(t)
	ctx := testCtx(t)
	observer := newClient(t, []string{srv.Addr()})
	a := newDouble(t, newClient(t, []string{srv.Addr()}), "/interop/double", 3)
	b := newDouble(t, newClient(t, []string{srv.Addr()}), "/interop/double", 3)
	enters := []<-chan error{run(ctx, a.Enter), run(ctx, b.Enter)}
	eventually(t, func() bool { return len(members(t, observer, "/interop/double")) == 2 }, "the Go members joined")
	for _, e := range enters {
		notYet(t, e, "Enter with two of three members")
	}

	java := zkrtest.StartCuratorPeer(t, "double", srv.Addr(), "/interop/double", "3")
	java.Expect(t, "ENTERED")
	for _, e := range enters {
		require.NoError(t, <-e, "the Java member filled the barrier")
	}
	require.Len(t, members(t, observer, "/interop/double"), 3)

	leaves := []<-chan error{run(ctx, a.Leave), run(ctx, b.Leave)}
	for _, l := range leaves {
		notYet(t, l, "Leave while the Java member is in")
	}
	java.Send(t, "leave")
	java.Expect(t, "LEFT")
	for _, l := range leaves {
		require.NoError(t, <-l)
	}
	require.Empty(t, children(t, observer, "/interop/double"), "no member node, no ready node")

	// And the other way round: Go fills a barrier the Java member waits in.
	java = zkrtest.StartCuratorPeer(t, "double", srv.Addr(), "/interop/double2", "2")
	java.Expect(t, "READY")
	eventually(t, func() bool { return len(members(t, observer, "/interop/double2")) == 1 }, "the Java member joined")
	d := newDouble(t, newClient(t, []string{srv.Addr()}), "/interop/double2", 2)
	require.NoError(t, d.Enter(ctx))
	java.Expect(t, "ENTERED")
	left := run(ctx, d.Leave)
	java.Send(t, "leave")
	java.Expect(t, "LEFT")
	require.NoError(t, <-left)
	require.Empty(t, children(t, observer, "/interop/double2"))
}
