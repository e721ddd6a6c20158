package notify

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A listener that blocks holds up no Push; once it returns, every change is
// delivered in order, to the listeners in the order they registered, and Run ends
// after the changes pushed before End.
func TestDeliveryInOrderAfterABlockedListener(t *testing.T) {
	l := New[int]()
	release := make(chan struct{})
	var heard []string
	l.Listen(func(v int) {
		if v == 0 {
			<-release
		}
		heard = append(heard, "a"+string(rune('0'+v)))
	})
	l.Listen(func(v int) { heard = append(heard, "b"+string(rune('0'+v))) })
	stopped := l.Listen(func(int) { t.Error("an unregistered listener was called") })
	stopped()
	l.Listen(nil)()
	done := make(chan struct{})
	go func() { l.Run(nil); close(done) }()
	for v := range 3 {
		l.Push(v) // none of these waits for the blocked listener
	}
	l.End()
	l.Push(9) // after End: not delivered
	close(release)
	<-done
	require.Equal(t, []string{"a0", "b0", "a1", "b1", "a2", "b2"}, heard)
}

// A closed stop ends Run, dropping what is pending; a listener may stop its own
// registration.
func TestStopDropsWhatIsPending(t *testing.T) {
	l := New[int]()
	stop := make(chan struct{})
	var heard []int
	unregister := l.Listen(func(v int) {
		heard = append(heard, v)
		if v == 1 {
			close(stop)
		}
	})
	defer unregister()
	l.Push(0)
	l.Push(1)
	l.Push(2)
	l.Run(stop)
	require.Equal(t, []int{0, 1}, heard)
}

// A listener hears only what is pushed after it registered, even when the delivery
// of earlier changes has not begun.
func TestListenHearsWhatIsPushedAfter(t *testing.T) {
	l := New[int]()
	var early, late []int
	l.Listen(func(v int) { early = append(early, v) })
	l.Push(1)
	l.Listen(func(v int) { late = append(late, v) })
	l.Push(2)
	l.End()
	l.Run(nil)
	require.Equal(t, []int{1, 2}, early)
	require.Equal(t, []int{2}, late)
}

// Start delivers on its own goroutine and calls then after every listener; Stop
// waits for the delivery to end, and nothing pushed after it is delivered.
func TestStartAndStop(t *testing.T) {
	l := New[int]()
	var heard []string
	l.Listen(func(v int) { heard = append(heard, fmt.Sprint("a", v)) })
	l.Listen(func(v int) { heard = append(heard, fmt.Sprint("b", v)) })
	delivered := make(chan int, 3)
	l.Start(func(v int) { delivered <- v })
	l.Start(func(int) { t.Error("a second Start delivers") })
	l.Push(1)
	l.Push(2)
	require.Equal(t, 1, <-delivered)
	require.Equal(t, 2, <-delivered)
	l.Stop() // no listener is being called: it waits for the delivery to end
	l.Push(3)
	l.Stop()
	require.Equal(t, []string{"a1", "b1", "a2", "b2"}, heard)
	require.Empty(t, delivered)
}

// A listener may call Stop: it returns without waiting for itself, and the change
// under way goes no further.
func TestStopFromAListener(t *testing.T) {
	l := New[int]()
	var heard []string
	l.Listen(func(v int) {
		heard = append(heard, fmt.Sprint("a", v))
		if v == 2 {
			l.Stop()
		}
	})
	l.Listen(func(v int) { heard = append(heard, fmt.Sprint("b", v)) })
	l.Start(func(v int) {
		if v == 2 {
			t.Error("then heard a change a listener stopped")
		}
	})
	l.Push(1)
	l.Push(2)
	l.Push(3)
	l.running.Wait() // the delivery's end: Stop from here may not wait for it
	require.Equal(t, []string{"a1", "b1", "a2"}, heard)
}

// Stop before Start: nothing is delivered, and nothing runs.
func TestStopBeforeStart(t *testing.T) {
	l := New[int]()
	l.Listen(func(int) { t.Error("heard after Stop") })
	l.Push(1)
	l.Stop()
	l.Start(nil)
	l.Push(2)
	l.Stop()
}

// Pop hands out every item once, in order, to any number of takers, and gives up
// when done closes even with items left.
func TestQueueHandsOutEachItemOnce(t *testing.T) {
	q := NewQueue[int]()
	const n = 1000
	var wg sync.WaitGroup
	got := make(chan []int, 2)
	done := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []int
			for {
				v, ok := q.Pop(done)
				if !ok {
					got <- mine
					return
				}
				mine = append(mine, v)
				if v == n-1 {
					close(done) // the last: both takers stop
				}
			}
		}()
	}
	for v := range n {
		q.Push(v)
	}
	wg.Wait()
	a, b := <-got, <-got
	require.True(t, slices.IsSorted(a) && slices.IsSorted(b), "each taker gets items in order")
	all := slices.Sorted(slices.Values(append(a, b...)))
	require.Equal(t, n, len(all))
	for i, v := range all {
		require.Equal(t, i, v)
	}

	q.Push(7)
	_, ok := q.Pop(done)
	require.False(t, ok, "a closed done drops what is left")
}

// Listeners that stop, first, last, in the middle, or twice, leave the others
// hearing every change pushed after they registered, in the order they registered.
func TestStopKeepsTheOthersInOrder(t *testing.T) {
	l := New[int]()
	var heard []string
	stops := map[string]func(){}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		stops[name] = l.Listen(func(v int) { heard = append(heard, fmt.Sprint(name, v)) })
	}
	stops["a"]()
	stops["c"]()
	stops["e"]()
	stops["c"]() // a second stop does nothing
	l.Push(1)
	stops["f"] = l.Listen(func(v int) { heard = append(heard, fmt.Sprint("f", v)) })
	l.Push(2)
	stops["b"]() // before the delivery, which looks who is registered then
	l.Push(3)
	l.End()
	l.Run(nil)
	require.Equal(t, []string{"d1", "d2", "f2", "d3", "f3"}, heard)
}

// BenchmarkListenAndStop registers and stops one listener among n others, as a
// holder's state listener is among a client's many holds: constant in n.
func BenchmarkListenAndStop(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := New[int]()
			for range n {
				l.Listen(func(int) {})
			}
			b.ReportAllocs()
			for b.Loop() {
				l.Listen(func(int) {})()
			}
		})
	}
}
