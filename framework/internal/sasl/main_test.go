package sasl

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/zkrecipes/zkrecipes/zktest"
	"go.uber.org/goleak"
)

// kdc is the package's one KDC, shared by its Kerberos tests.
var kdc *zktest.KDC

func TestMain(m *testing.M) {
	var err error
	if kdc, err = zktest.StartKDC(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = kdc.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
