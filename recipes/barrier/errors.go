package barrier

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/args"
)

var (
	// ErrInvalid is wrapped by the errors for bad arguments.
	ErrInvalid = errors.New("barrier: invalid argument")
	// ErrEntered is returned by Enter on a Double that has entered, or is entering.
	ErrEntered = errors.New("barrier: already entered")
	// ErrNotEntered is returned by Leave on a Double that has not entered, or is still
	// entering.
	ErrNotEntered = errors.New("barrier: not entered")
	// ErrLost is wrapped by the error of a Leave whose member node had gone with its
	// session before Leave was called: the other members counted this one as gone,
	// and may have passed their Leave before it.
	ErrLost = errors.New("barrier: our member node went with its session before Leave")
)

func checkArgs(c *framework.Client, path string) error {
	if err := args.Check(c, path); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// lookupTimeout bounds the lookup of the local address, which a broken resolver
// could otherwise hold up for long.
const lookupTimeout = 2 * time.Second

// localAddress is the data of every node the barriers make: Curator writes its
// client's default data there, the local host's address as text.
var localAddress = sync.OnceValue(func() []byte {
	host, err := os.Hostname()
	if err != nil {
		return []byte{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		return []byte{}
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
			return []byte(a)
		}
	}
	return []byte(addrs[0])
})
