// Package attempt is what the recipes' attempts at a change on the server share: the
// context that undoes what a failed attempt left behind (CleanupContext), and the
// pauses between the attempts of a loop that never gives up (Pauses).
package attempt
