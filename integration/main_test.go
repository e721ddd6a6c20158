package integration

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(removingBuilt{m}) }

// removingBuilt removes the programs the tests built once they have all run.
type removingBuilt struct{ *testing.M }

func (m removingBuilt) Run() int {
	defer func() {
		if holderDir != "" {
			_ = os.RemoveAll(holderDir)
		}
	}()
	return m.M.Run()
}

const wait = zkrtest.Wait

var (
	testCtx   = zkrtest.Context
	newClient = zkrtest.Client
)
