// Package hold is what every lock-like recipe gives its holder, whatever it holds (a
// lock, leases, a leadership, several locks at once): a context that ends when the
// hold may be gone (Context), and Do, which runs a function under the hold and
// releases it however the function ends.
package hold
