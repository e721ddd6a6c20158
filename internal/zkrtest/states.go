package zkrtest

import (
	"sync"

	"github.com/zkrecipes/zkrecipes/framework"
)

// Hears returns a channel closed the first time c reports state s, and the stop of
// the listener that watches for it.
func Hears(c *framework.Client, s framework.ConnectionState) (<-chan struct{}, func()) {
	heard := make(chan struct{})
	var once sync.Once
	stop := c.Listen(func(got framework.ConnectionState) {
		if got == s {
			once.Do(func() { close(heard) })
		}
	})
	return heard, stop
}
