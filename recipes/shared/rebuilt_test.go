package shared

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

// A value followed through an ensemble rebuilt behind its address, where the node
// was made again with another value, at a lower mzxid than the values before: the
// follower takes the new ensemble's value, and its listener hears it.
func TestFollowsARebuiltEnsemble(t *testing.T) {
	ensemble := zkrtest.NewRebuilt(t)
	ctx := testCtx(t)
	v, err := NewValue(newClient(t, []string{ensemble.Addr()}, framework.WithSessionTimeout(time.Second)), "/value", []byte("seed"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close(context.Background()) })
	require.NoError(t, v.Start(ctx))
	for i := range 10 { // mzxids above the fresh server's
		require.NoError(t, v.Set(ctx, fmt.Appendf(nil, "old %d", i)))
	}
	_, err = newClient(t, []string{ensemble.Fresh.Addr()}).Create(ctx, "/value", []byte("fresh"))
	require.NoError(t, err)
	var h heard[[]byte]
	v.Listen(h.add)

	ensemble.Rebuild()
	require.Eventually(t, func() bool { last, _ := h.last(); return string(last.Value) == "fresh" }, wait, 10*time.Millisecond,
		"heard %d values", len(h.all()))
	require.Equal(t, "fresh", string(v.Get().Value))
}
