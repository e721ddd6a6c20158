// Package args is the checks every recipe's constructor makes of what it is given
// (a client and a path, a node name, a participant id), the participant id a recipe
// uses when given none, and the one loop that applies a recipe's options (Apply). A
// recipe wraps a check's error, and Apply's, in its own ErrInvalid, so that the
// caller sees the recipe's name ("mutex: invalid argument: nil client", "cache:
// invalid argument: Depth: -1 is negative").
package args
