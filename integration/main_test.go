package integration

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
)
