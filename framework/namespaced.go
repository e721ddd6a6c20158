package framework

import (
	"sync/atomic"
)

// view is what a namespaced view of a client has of its own.
type view struct {
	closed atomic.Bool
	err    error // the namespace given was invalid
}

// Namespaced returns a view of the client in namespace ns (without slashes at the
// ends, "" for none), as Curator's usingNamespace does: it shares the session, its
// connection states, retries, ACL provider and credentials, and puts paths under
// /ns instead of the client's own namespace (namespaces do not nest). Its Close
// ends the view alone: its operations then fail with ErrClosed, and the session
// goes on; closing the client it came from closes every view's operations too.
// An invalid ns gives a view whose every operation fails with an error wrapping
// ErrInvalidNamespace.
func (c *Client) Namespaced(ns string) *Client {
	v := &view{}
	if err := validateNamespace(ns); err != nil {
		v.err = err
	}
	return &Client{core: c.core, namespace: ns, view: v}
}

// usable says why a view cannot be used; nil for a client that is no view.
func (v *view) usable() error {
	switch {
	case v == nil:
		return nil
	case v.err != nil:
		return v.err
	case v.closed.Load():
		return ErrClosed
	}
	return nil
}
