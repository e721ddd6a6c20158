package zktest

import (
	"context"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// heldPort is a loopback port held by a socket that is bound to it but never listens,
// so that the port stays a proxy's while its listener is closed and opened again.
//
// A bound socket keeps the port from everything else on the machine: another bind,
// explicit or "any free port", fails or passes it by, and the kernel never picks it
// for an outgoing connection. Yet a connection to it is refused at once, as to a port
// nobody listens on, because no socket there listens. Only the proxy's own listeners
// may share the port, by SO_REUSEPORT, which the holding socket sets too and nothing
// else of ours does.
type heldPort struct {
	fd   int
	addr string // "127.0.0.1:port"
}

// holdPort binds a socket to a free loopback port and keeps it. The socket is
// close-on-exec: a member's java process inheriting it would hold the port after
// the proxy's Close.
func holdPort() (*heldPort, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("zktest: hold a port: %w", err)
	}
	port, err := bindAnyPort(fd)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("zktest: hold a port: %w", err)
	}
	return &heldPort{fd: fd, addr: loopback(port)}, nil
}

// bindAnyPort binds fd to a free loopback port, shared with SO_REUSEPORT, and says which.
func bindAnyPort(fd int) (int, error) {
	if err := setReusePort(fd); err != nil {
		return 0, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	return sa.(*unix.SockaddrInet4).Port, nil
}

func setReusePort(fd int) error { return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }

// listen opens a listener on the held port.
func (h *heldPort) listen() (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = setReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	return lc.Listen(context.Background(), "tcp", h.addr)
}

// release gives the port back.
func (h *heldPort) release() error { return unix.Close(h.fd) }
