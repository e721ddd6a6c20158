package discovery

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func instances(ids ...string) []*Instance {
	out := make([]*Instance, len(ids))
	for i, id := range ids {
		out[i] = &Instance{Name: "s", ID: id}
	}
	return out
}

// Round robin is fair across concurrent callers: each instance is taken exactly as
// often as the others.
func TestRoundRobinFair(t *testing.T) {
	pick := roundRobin()
	all := instances("a", "b", "c")
	var (
		mu     sync.Mutex
		counts = map[string]int{}
		wg     sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := map[string]int{}
			for range 300 {
				local[pick(all).ID]++
			}
			mu.Lock()
			for id, n := range local {
				counts[id] += n
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, map[string]int{"a": 800, "b": 800, "c": 800}, counts)
}

func TestRandomCoversAll(t *testing.T) {
	pick := random()
	all := instances("a", "b", "c")
	seen := map[string]bool{}
	for i := 0; len(seen) < 3; i++ {
		require.Less(t, i, 10000, "random never picked some instance")
		seen[pick(all).ID] = true
	}
}

// Sticky keeps its instance while usable, and moves on only when it is not.
func TestSticky(t *testing.T) {
	pick := sticky()
	first := pick(instances("a", "b", "c")).ID
	for range 10 {
		require.Equal(t, first, pick(instances("a", "b", "c")).ID)
	}
	others := []string{}
	for _, id := range []string{"a", "b", "c"} {
		if id != first {
			others = append(others, id)
		}
	}
	second := pick(instances(others...)).ID
	require.NotEqual(t, first, second)
	require.Equal(t, second, pick(instances("a", "b", "c")).ID, "back instances do not take it over")
}

// Curator's down-instance rule, on a fake clock: down after errors errors within
// forget of the first, up again once forget has passed since it.
func TestDownAfter(t *testing.T) {
	now := time.Unix(1000, 0)
	d := newDowns(2, 30*time.Second)
	d.now = func() time.Time { return now }
	d.note("a")
	require.False(t, d.down("a"), "one error of two")
	now = now.Add(10 * time.Second)
	d.note("a")
	require.True(t, d.down("a"))
	require.False(t, d.down("b"))
	now = now.Add(19 * time.Second)
	require.True(t, d.down("a"), "29s after the first error")
	now = now.Add(time.Second)
	require.False(t, d.down("a"), "forgotten 30s after the first error")
	d.note("a")
	require.False(t, d.down("a"), "the count starts again")
	now = now.Add(31 * time.Second)
	d.note("a")
	require.False(t, d.down("a"), "an error after forget starts a new count")
}
