package participants

import (
	"testing"

	"github.com/zkrecipes/zkrecipes/internal/zkrtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(zkrtest.SharedServer(m)) }
