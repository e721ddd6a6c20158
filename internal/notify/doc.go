// Package notify is how zkrecipes hands work from one goroutine to another without
// blocking the one that hands it over: an unbounded Queue, and Listeners, the set of
// a client's or a recipe's listeners with the changes queued for them.
//
// A producer here is a loop that must never wait (go-zookeeper's event goroutine, a
// cache's loop, a lock's keeper): it pushes and goes on at once. Listeners hear the
// changes in order, one call at a time, on a goroutine of their own, so a listener
// that blocks holds up later changes but never the loop, and a listener may call its
// recipe's Close, which waits for the loop but never for a listener.
//
// It sits at the module's root, below framework, so that the client and every recipe
// share it.
package notify
