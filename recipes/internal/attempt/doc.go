// Package attempt is what the recipes' attempts at a change on the server share: the
// context that undoes what a failed attempt left behind (CleanupContext), the
// pauses between the attempts of a loop that never gives up (Pauses), and the wait
// for a client's first session before such a loop begins (FirstSession).
package attempt
