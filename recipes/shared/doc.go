// Package shared keeps a value that many processes read and write in one ZooKeeper
// node: Apache Curator's SharedValue (Value, any bytes) and SharedCount (Count, a
// 4-byte big-endian int), with their layout, so Go and Java share them.
//
// Start creates the node with the seed if it is missing (under container parents)
// and loads it; from then on the value follows the node through a cache of it alone
// (recipes/cache with Depth(0): one watch, read again on every change, and again
// after a reconnect or a new session), so Get costs no request. Values are ordered by
// the zxid of the write that made them, as Curator's are since CURATOR-688 (versions
// wrap after 2^31 writes): Get never returns an older value than one it returned, and
// listeners hear each value newer than the last they heard, in order, so versions
// never go back while the node lives. A listener may miss a value overtaken before it
// could be read, never the last one: every Set ends up in every listener's final
// state.
//
// Set writes whatever the node holds; TrySet writes only if the node is still at the
// version given, and false means another write came first and nothing changed. Their
// writes are never sent twice blindly: a TrySet whose reply was lost is sent again
// (at most one of the two can apply) and reports false only when a read proves
// another writer took the version, and a Set whose reply was lost is not sent again.
// Either returns an error wrapping ErrUnknownOutcome when the outcome cannot be
// known. (Curator's client resends both, and its trySetValue then takes the refusal
// of its own applied write for a lost race, returning false for a write that
// happened.)
//
// A closed client ends the following: Start, Set and TrySet return an error wrapping
// framework.ErrClosed, and the listeners hear the last value known once more, its
// Err wrapping framework.ErrClosed. Close is still needed to free what it holds.
package shared
