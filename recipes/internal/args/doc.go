// Package args is the checks every recipe's constructor makes of what it is given
// (a client and a path, a node name) and the participant id a recipe uses when given
// none. A recipe wraps a check's error in its own ErrInvalid, so that the caller sees
// the recipe's name ("mutex: invalid argument: nil client").
package args
