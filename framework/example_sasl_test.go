package framework_test

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// A server that requires a SASL login (here DIGEST-MD5, the JAAS file's user alice)
// refuses every request of a client without one.
func ExampleWithSASL() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx, zktest.WithSASLDigest("alice", "secret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// Kerberos instead: SASLConfig{Mechanism: framework.SASLGSSAPI,
	// Principal: "app@EXAMPLE.COM", Keytab: "/etc/app.keytab"}.
	client, err := framework.New([]string{srv.Addr()}, framework.WithSASL(framework.SASLConfig{
		Mechanism: framework.SASLDigestMD5, User: "alice", Password: "secret"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.WaitConnected(waitCtx); err != nil {
		fmt.Println(err) // a refused login says so, with the mechanism and the server
		return
	}
	path, err := client.Create(ctx, "/secured", nil)
	fmt.Println(path, err)
	// Output: /secured <nil>
}
