package nodes

import (
	"github.com/zkrecipes/zkrecipes/framework"
	"github.com/zkrecipes/zkrecipes/recipes/internal/instrument"
)

// The changes of a node's presence, the values of the change attribute: as Event's
// Present says.
const (
	changePlaced = "placed" // made, made again or taken over
	changeGone   = "gone"   // found gone or not ours
)

// newPresenceChanges counts the Events of a PersistentNode: nil when its client
// measures nothing. Every placed after the first follows a gone: a re-creation.
func newPresenceChanges(c *framework.Client) *instrument.Counter {
	return instrument.New(c, "persistent_node").Counter("zkrecipes.persistent_node.presence_changes",
		"Persistent nodes put in place (made, made again after a loss, taken over) and found gone (deleted, gone with their session, not ours), by change (placed, gone).",
		"{change}", instrument.Attr{Key: "change", Values: []string{changePlaced, changeGone}})
}

func presence(inPlace bool) string {
	if inPlace {
		return changePlaced
	}
	return changeGone
}
