package framework

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// Requests running while their handle is given up (an expired session) and while the
// client closes end with an answer, a retry on the next handle or ErrClosed; the
// handle's close waits for them before go-zookeeper's Close, which a request queued
// as it began could hang for good (go-zookeeper v1.0.4 answers such a request three
// times into a two-slot channel). Close returns.
func TestRequestsWhileHandlesCloseEndAndCloseReturns(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c, err := New([]string{proxy.Addr()}, WithSessionTimeout(2*time.Second))
	require.NoError(t, err)
	ctx := testCtx(t)
	require.NoError(t, c.WaitConnected(ctx))
	log := listen(c)

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, _, err := c.Exists(context.Background(), "/")
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 2 {
		require.NoError(t, proxy.ExpireSession(ctx, 2*time.Second))
		require.NoError(t, c.WaitConnected(ctx))
	}
	closed := make(chan struct{})
	go func() { _ = c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, ErrClosed)
	}
	require.Contains(t, log.get(), Lost)
}
