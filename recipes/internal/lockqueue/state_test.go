package lockqueue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A hold moves holding → lost on a loss, and to ended on its holder's end from
// either; nothing moves it out of ended, nor back to holding.
func TestHoldStateNext(t *testing.T) {
	for _, c := range []struct {
		from holdState
		e    holdEvent
		want holdState
	}{
		{holding, loss, lost},
		{holding, end, ended},
		{lost, loss, lost},
		{lost, end, ended},
		{ended, loss, ended},
		{ended, end, ended},
	} {
		require.Equal(t, c.want, c.from.next(c.e), "from %d on %d", c.from, c.e)
	}
}
