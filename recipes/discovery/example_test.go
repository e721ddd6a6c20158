package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/discovery"
	"github.com/zkrecipes/zkrecipes/zktest"
)

// connect starts a throwaway ZooKeeper and a client of it; use your ensemble's
// addresses instead.
func connect(ctx context.Context) (*framework.Client, func(), error) {
	srv, err := zktest.StartServer(ctx)
	if err != nil {
		return nil, nil, err
	}
	client, err := framework.New([]string{srv.Addr()})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return client, func() { client.Close(); srv.Close() }, nil
}

func ExampleDiscovery() {
	ctx := context.Background()
	client, done, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()

	// The same layout Curator's ServiceDiscoveryBuilder.basePath("/services") uses.
	d, err := discovery.New(client, "/services")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []string{"orders-1", "orders-2"} {
		r, err := d.Register(ctx, discovery.Instance{Name: "orders", ID: id, Address: "10.0.0.1", Port: 8080})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer r.Close(context.Background())
	}
	names, _ := d.Names(ctx)
	fmt.Println(names)
	instances, _ := d.Instances(ctx, "orders")
	for _, in := range instances {
		fmt.Println(in.ID, in.Address, in.Port)
	}
	// Output:
	// [orders]
	// orders-1 10.0.0.1 8080
	// orders-2 10.0.0.1 8080
}

func ExampleRegistration() {
	ctx := context.Background()
	client, done, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	d, _ := discovery.New(client, "/services")

	// The payload is any JSON; Java's Curator reads a Map payload with "@class".
	in := discovery.Instance{Name: "orders", ID: "go-1", Address: "10.0.0.2", Port: 8080,
		Payload: json.RawMessage(`{"@class":"java.util.HashMap","zone":"eu-1"}`)}
	r, err := d.Register(ctx, in)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Take the instance out of rotation without unregistering it.
	in.Disabled = true
	if err := r.Update(ctx, in); err != nil {
		fmt.Println(err)
		return
	}
	got, _ := d.Instance(ctx, "orders", "go-1")
	fmt.Println(got.ID, "disabled:", got.Disabled, "payload:", string(got.Payload))
	_ = r.Close(context.Background())
	_, err = d.Instance(ctx, "orders", "go-1")
	fmt.Println(err != nil)
	// Output:
	// go-1 disabled: true payload: {"@class":"java.util.HashMap","zone":"eu-1"}
	// true
}

func ExampleProvider() {
	ctx := context.Background()
	client, done, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	d, _ := discovery.New(client, "/services")
	for _, id := range []string{"a", "b"} {
		r, _ := d.Register(ctx, discovery.Instance{Name: "orders", ID: id, Address: id + ".internal", Port: 8080})
		defer r.Close(context.Background())
	}

	p, err := d.NewProvider("orders") // RoundRobin by default
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close(context.Background())
	if err := p.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		in, err := p.Pick()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(in.Address)
	}
	// Output:
	// a.internal
	// b.internal
	// a.internal
}

func ExampleProvider_Listen() {
	ctx := context.Background()
	client, done, err := connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	d, _ := discovery.New(client, "/services")
	p, _ := d.NewProvider("orders")
	defer p.Close(context.Background())
	events := make(chan discovery.Event, 10)
	p.Listen(func(e discovery.Event) { events <- e })
	if err := p.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}

	show := func() { // the next event, which the step before caused
		switch e := <-events; e.Type {
		case discovery.Added:
			fmt.Println(e.Type, e.New.ID, e.New.Port)
		case discovery.Updated:
			fmt.Println(e.Type, e.New.ID, e.Old.Port, "->", e.New.Port)
		case discovery.Removed:
			fmt.Println(e.Type, e.Old.ID)
		}
	}
	in := discovery.Instance{Name: "orders", ID: "go-1", Address: "10.0.0.2", Port: 8080}
	r, err := d.Register(ctx, in)
	if err != nil {
		fmt.Println(err)
		return
	}
	show()
	in.Port = 9090
	_ = r.Update(ctx, in)
	show()
	_ = r.Close(context.Background())
	show()
	// Output:
	// Added go-1 8080
	// Updated go-1 8080 -> 9090
	// Removed go-1
}

func ExampleInstance_URI() {
	in := discovery.Instance{Name: "orders", ID: "go-1", Address: "10.0.0.2", Port: 8080, SSLPort: 8443,
		URISpec: "{scheme}://{address}:{ssl-port}/{name}"}
	uri, err := in.URI()
	fmt.Println(uri, err)
	// Output:
	// https://10.0.0.2:8443/orders <nil>
}
