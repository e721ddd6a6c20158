package ui_test

import (
	"fmt"
	"io/fs"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/zkrecipes/cmd/zkr/ui"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The page is three files, all in the binary.
func ExampleAssets() {
	_ = fs.WalkDir(ui.Assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fmt.Println(p)
		}
		return err
	})
	// Output:
	// assets/app.css
	// assets/app.js
	// assets/index.html
}
