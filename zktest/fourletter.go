package zktest

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"
)

// FourLetter sends one of ZooKeeper's four-letter words (ruok, srvr, stat, mntr, wchs,
// wchc, wchp, cons, conf, dump) to the server at addr and returns its answer.
func FourLetter(ctx context.Context, addr, word string) (string, error) {
	return fourLetter(ctx, addr, word)
}

func fourLetter(ctx context.Context, addr, word string) (string, error) {
	if len(word) != 4 {
		return "", fmt.Errorf("zktest: %q is not a four-letter word", word)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("zktest: %s to %s: %w", word, addr, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte(word)); err != nil {
		return "", fmt.Errorf("zktest: %s to %s: %w", word, addr, err)
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("zktest: %s to %s: %w", word, addr, err)
	}
	if len(out) == 0 { // every word has an answer; silence is a closed connection
		return "", fmt.Errorf("zktest: %s to %s: connection closed without an answer", word, addr)
	}
	return string(out), nil
}
