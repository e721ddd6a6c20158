package notify

import (
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
	var unregister func()
	unregister = l.Listen(func(v int) {
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
