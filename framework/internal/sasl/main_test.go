package sasl

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/zkrecipes/zkrecipes/zktest"
	"go.uber.org/goleak"
)

// The package's one KDC, started by the first test that needs it and shared by the
// rest; the tests without Kerberos (and the fuzz targets) need no KDC installed.
var (
	kdcOnce sync.Once
	kdcOne  *zktest.KDC
	kdcErr  error
)

func sharedKDC(t *testing.T) *zktest.KDC {
	t.Helper()
	kdcOnce.Do(func() { kdcOne, kdcErr = zktest.StartKDC(context.Background()) })
	if kdcErr != nil {
		t.Fatal(kdcErr)
	}
	return kdcOne
}

func TestMain(m *testing.M) {
	code := m.Run()
	if kdcOne != nil {
		_ = kdcOne.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
