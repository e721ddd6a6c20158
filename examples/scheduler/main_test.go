package main

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo checks its own invariants; here it runs as `make demo` would.
func TestDemo(t *testing.T) {
	t.Setenv("ZK_SERVERS", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx); err != nil {
		t.Fatal(err)
	}
}
