package framework_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/zktest"
)

func Example() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx) // a throwaway ZooKeeper; use your ensemble's addresses
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	client, err := framework.New([]string{srv.Addr()},
		framework.WithSessionTimeout(10*time.Second),
		framework.WithNamespace("myapp"),
		framework.WithRetryPolicy(framework.ExponentialBackoff(100*time.Millisecond, 5)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// Every lock and leadership depends on the session: watch what happens to it.
	stop := client.Listen(func(s framework.ConnectionState) {
		if framework.StandardErrorPolicy.IsError(s) { // the default policy
			fmt.Println("stop trusting what this session holds:", s)
		}
	})
	defer stop()

	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.WaitConnected(waitCtx); err != nil {
		fmt.Println(err)
		return
	}
	path, err := client.Create(ctx, "/config/greeting", []byte("hello"), framework.CreatingParents())
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _, err := client.Get(ctx, path)
	fmt.Println(path, string(data), err)
	// Output: /config/greeting hello <nil>
}

func ExampleWithTLS() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx, zktest.WithTLS()) // ZooKeeper with a secure client port
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	// In production, trust your own authority:
	//	pool := x509.NewCertPool()
	//	pool.AppendCertsFromPEM(caPEM)
	//	cfg := &tls.Config{RootCAs: pool}
	cfg := srv.ClientTLSConfig()

	client, err := framework.New([]string{srv.SecureAddr()}, framework.WithTLS(cfg))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A certificate the client does not trust ends this wait with the reason, such as
	// "x509: certificate signed by unknown authority".
	if err := client.WaitConnected(waitCtx); err != nil {
		fmt.Println(err)
		return
	}
	path, err := client.Create(ctx, "/secret", []byte("encrypted on the wire"))
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _, err := client.Get(ctx, path)
	fmt.Println(string(data), err)
	// Output: encrypted on the wire <nil>
}

// A client prints as its servers, namespace and state, never with its credentials.
func ExampleClient_Format() {
	client, err := framework.New([]string{"zk1.example:2181", "zk2.example:2181"},
		framework.WithNamespace("myapp"),
		framework.WithAuth("digest", []byte("alice:secret")))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	fmt.Printf("%v\n", client)
	// Output: zkrecipes client of zk1.example:2181,zk2.example:2181 in namespace myapp: Latent
}

// A recipe package takes what it needs of its client through ForRecipes: here, work
// of its own that ends when the client closes, with the client's policies at hand.
func ExamplePlumbing() {
	client, err := framework.New([]string{"zk1.example:2181"})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := client.ForRecipes()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-p.Context().Done() // a recipe waits on its own work too
		p.Logger().Debug("client closed: stopping")
		fmt.Println(context.Cause(p.Context()))
	}()
	client.Close()
	<-done
	fmt.Println(p.ErrorPolicy() == framework.StandardErrorPolicy, p.MaxDataSize() == framework.DefaultMaxDataSize)
	// Output:
	// framework: client closed
	// true true
}

// An operation of a client that has never reached a server fails within one
// connection timeout, even with no deadline of its own, and its error says how long
// it waited and why the last attempt failed. (The first failed attempt is also
// logged at Warn, to slog.Default() for a client without a logger.)
func ExampleConnectError() {
	client, err := framework.New([]string{"127.0.0.1:1"}, // nothing listens there
		framework.WithConnectionTimeout(time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	_, _, err = client.Get(context.Background(), "/")
	var ce *framework.ConnectError
	if errors.As(err, &ce) {
		fmt.Println(errors.Is(err, framework.ErrNoServer), ce.Waited >= time.Second, ce.Last)
	}
	// Output: true true dial tcp 127.0.0.1:1: connect: connection refused
}

// Metrics go to the meter provider given, here OpenTelemetry's SDK with a reader
// that is read on demand; in a service, a Prometheus or OTLP exporter takes its place.
func ExampleWithMeterProvider() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	c, err := framework.New([]string{srv.Addr()}, framework.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.WaitConnected(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_, _ = c.Create(ctx, "/example", nil)
	_, _ = c.Create(ctx, "/example", nil)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "zkrecipes.client.request.duration" {
			for _, p := range h.DataPoints {
				outcome, _ := p.Attributes.Value("outcome")
				fmt.Println("create", outcome.AsString(), p.Count)
			}
		}
	}
	// Unordered output:
	// create ok 1
	// create node_exists 1
}

// Why a request failed is checked with this package's error variables, which are
// go-zookeeper's own: a program needs no other import.
func ExampleClient_Create() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	for range 2 {
		_, err := client.Create(ctx, "/app/config", []byte("v1"), framework.CreatingParents())
		switch {
		case errors.Is(err, framework.ErrNodeExists):
			fmt.Println("already there")
		case err != nil:
			fmt.Println(err)
			return
		default:
			fmt.Println("created")
		}
	}
	var stat *framework.Stat
	_, stat, err = client.Get(ctx, "/app/config")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version:", stat.Version, "bytes:", stat.DataLength)
	// Output:
	// created
	// already there
	// version: 0 bytes: 2
}

// An ACL that only the holder of a digest's credentials may use: every other client
// gets an error wrapping ErrNoAuth.
func ExampleDigestACL() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	owner, err := framework.New([]string{srv.Addr()},
		framework.WithAuth("digest", []byte("scheduler:secret")),
		framework.WithACL(framework.FixedACL(framework.DigestACL(framework.PermAll, "scheduler", "secret")...)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer owner.Close()
	stranger, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stranger.Close()

	if _, err := owner.Create(ctx, "/jobs", []byte("private")); err != nil {
		fmt.Println(err)
		return
	}
	_, _, err = stranger.Get(ctx, "/jobs")
	fmt.Println("stranger refused:", errors.Is(err, framework.ErrNoAuth))
	data, _, err := owner.Get(ctx, "/jobs")
	fmt.Println("owner reads:", string(data), err)
	// Output:
	// stranger refused: true
	// owner reads: private <nil>
}

// A node made read-only for good: its data and its ACL can no longer be changed,
// while it can still be deleted (the parent's ACL decides that).
func ExampleWithNodePerms() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	if _, err := client.Create(ctx, "/config", []byte("v1"), framework.WithNodePerms(framework.PermRead)); err != nil {
		fmt.Println(err)
		return
	}
	acl, _, _ := client.GetACL(ctx, "/config")
	fmt.Println("acl:", acl[0].Scheme, acl[0].ID, acl[0].Perms == framework.PermRead)
	_, err = client.Set(ctx, "/config", []byte("v2"), -1)
	fmt.Println("set refused:", errors.Is(err, framework.ErrNoAuth))
	_, err = client.SetACL(ctx, "/config", framework.WorldACL(framework.PermAll), -1)
	fmt.Println("setACL refused:", errors.Is(err, framework.ErrNoAuth))
	fmt.Println("delete:", client.Delete(ctx, "/config", -1))
	// Output:
	// acl: world anyone true
	// set refused: true
	// setACL refused: true
	// delete: <nil>
}

func ExampleClient_AddWatch() {
	ctx := context.Background()
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// One watch follows /jobs and everything below it until it is closed.
	w, err := client.AddWatch(ctx, "/jobs", framework.WatchPersistentRecursive)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close(ctx)
	if _, err := client.Create(ctx, "/jobs/a", []byte("1"), framework.CreatingParents()); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := client.Set(ctx, "/jobs/a", []byte("2"), -1); err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		ev := <-w.Events()
		fmt.Println(ev.Type, ev.Path)
	}
	// Output:
	// EventNodeCreated /jobs
	// EventNodeCreated /jobs/a
	// EventNodeDataChanged /jobs/a
}
