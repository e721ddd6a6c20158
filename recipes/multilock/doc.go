// Package multilock holds several locks as one, all or nothing, after Apache Curator's
// InterProcessMultiLock.
//
// Acquire takes the locks in order; if one fails, those already held are released
// and the error is returned. One context bounds the whole Acquire,
// where Curator's timeout applies to each lock separately: a deadline here is the
// caller's whole budget. Release releases every lock at once, in one round trip
// where Curator's releases them one after another, carries on past failures, and
// returns them joined. NewMutexes sorts its paths, so that two
// multi-locks over overlapping paths, given in different orders, always take them in
// the same order and cannot deadlock each other. A lock that fails, for instance
// because an ACL refuses the client (an error wrapping framework.ErrNoAuth), fails
// the whole Acquire at once.
//
// Context ends when any of the locks may have been lost, and Do acquires, runs a
// function under that context and releases, even if the function panics.
//
// Metrics and traces: a multi-lock's acquisition is measured as the acquisitions of
// its locks, each under its own recipe (a mutex of NewMutexes as "mutex"), with one
// span per lock under the caller's span, since the locks it holds may be anyone's
// and need no client of ours.
package multilock
