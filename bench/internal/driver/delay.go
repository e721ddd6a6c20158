package driver

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"time"
)

// The latency mode (-delay): every contender reaches the server through a proxy
// that delays every byte by the same time each way, as a network would, so that a
// figure counts round trips rather than the server's and the clients' CPU. The unit
// is one request through that proxy, timed by the driver (calibrate).

// delayProxy forwards connections to target, each chunk read delivered delay later.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

// startDelayProxy listens on loopback and forwards to target with delay each way.
func startDelayProxy(target string, delay time.Duration) (*delayProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &delayProxy{ln: ln, target: target, delay: delay}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, for the contenders.
func (p *delayProxy) Addr() string { return p.ln.Addr().String() }

func (p *delayProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// chunk is what one read returned, and when it may go on.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies from src to dst, each chunk delay after it was read; reading goes on
// meanwhile, so the delay adds latency, not a limit on throughput.
func (p *delayProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	chunks := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ch := range chunks {
			time.Sleep(time.Until(ch.due))
			if _, err := dst.Write(ch.b); err != nil {
				break
			}
		}
		for range chunks { // the reader ends once the connection is closed
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunks <- chunk{slices.Clone(buf[:n]), time.Now().Add(p.delay)}
		}
		if err != nil {
			break
		}
	}
	close(chunks)
	<-done
	_ = dst.Close()
	_ = src.Close()
}

// Close stops the proxy and its connections.
func (p *delayProxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// calibrate is the median time of one request (an exists of /) through addr: the
// unit of the latency mode's figures.
func calibrate(ctx context.Context, addr string) (time.Duration, error) {
	conn, err := dialZK(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	const requests = 50
	times := make([]time.Duration, 0, requests)
	for range requests {
		start := time.Now()
		if _, _, err := conn.Exists("/"); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start))
	}
	if len(times) == 0 {
		return 0, errors.New("no request timed")
	}
	return Percentile(times, 50), nil
}
