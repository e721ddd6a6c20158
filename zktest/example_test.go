package zktest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkrecipes/zkrecipes/zktest"
)

// In a test, zktest.NewServer(t) does the same and stops the server at the end.
func ExampleStartServer() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	answer, err := srv.FourLetter(ctx, "ruok")
	fmt.Println(answer, err)
	// Output: imok <nil>
}

func ExampleStartEnsemble() {
	e, err := zktest.StartEnsemble(context.Background(), 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	fmt.Println(len(e.Addrs()), "servers; one leads:", e.Leader() >= 0)
	// Output: 3 servers; one leads: true
}

func ExampleProxy() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	proxy, err := zktest.StartProxy(srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer proxy.Close()

	srvr, err := zktest.FourLetter(ctx, proxy.Addr(), "srvr")
	fmt.Println(strings.Contains(srvr, "Mode: standalone"), err)
	proxy.Cut() // every connection through the proxy drops, and new ones are refused
	_, err = zktest.FourLetter(ctx, proxy.Addr(), "srvr")
	fmt.Println(err != nil)
	proxy.Restore()
	// Output:
	// true <nil>
	// true
}
