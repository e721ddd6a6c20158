package driver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// sessionTimeout is what every contender asks for: long enough that pings are
// negligible in the request counts (go-zookeeper pings every third of it, the Java
// client after a third of it idle), and the benchmark server allows it.
const sessionTimeout = 60 * time.Second

var openACL = zk.WorldACL(zk.PermAll)

// dialZK opens a bare go-zookeeper session, for the raw-operations and zk.Lock
// contenders and for the driver's own bookkeeping, and waits until it has a session.
// addr is a connect string: one server, or an ensemble's, comma-separated.
func dialZK(ctx context.Context, addr string) (*zk.Conn, error) {
	conn, events, err := zk.Connect(strings.Split(addr, ","), sessionTimeout,
		zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("connecting to %s: connection closed", addr)
			}
			if ev.State == zk.StateHasSession {
				go func() {
					for range events { // go-zookeeper drops what nobody reads; drain until Close
					}
				}()
				return conn, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("connecting to %s: %w", addr, ctx.Err())
		}
	}
}

// quiet drops go-zookeeper's log lines.
type quiet struct{}

func (quiet) Printf(string, ...any) {}
