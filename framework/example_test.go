package framework_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
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
		if client.ErrorPolicy().IsError(s) {
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
		fmt.Println(errors.Is(err, zk.ErrNoServer), ce.Waited >= time.Second, ce.Last)
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
