package probe

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestEnded: which changes between two readings wake the waiters.
func TestEnded(t *testing.T) {
	t.Parallel()
	held := Reading{Version: "1", Holder: "a 1"}
	for _, c := range []struct {
		name string
		a, b Reading
		want bool
	}{
		{"unchanged", held, held, false},
		{"released", held, Reading{Version: "2"}, true},
		{"deleted", held, Reading{}, true},
		{"taken over", held, Reading{Version: "2", Holder: "b 2"}, true},
		{"renewed", held, Reading{Version: "2", Holder: "a 1"}, false},
		{"taken while free", Reading{Version: "1"}, held, false},
		{"taken and freed between reads", Reading{Version: "1"}, Reading{Version: "3"}, true},
		{"lease state only (Azure)", Reading{Version: "e leased", Holder: "a 1"}, Reading{Version: "e"}, true},
	} {
		if got := ended(c.a, c.b); got != c.want {
			t.Errorf("%s: ended = %v; want %v", c.name, got, c.want)
		}
	}
}

func TestInterval(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want time.Duration
		invalid  bool
	}{
		{0, DefaultInterval, false},
		{Off, 0, false},
		{-time.Second, 0, false},
		{MinInterval, MinInterval, false},
		{time.Second, time.Second, false},
		{MinInterval - 1, 0, true},
	} {
		got, err := Interval("ProbeInterval", c.in)
		if c.invalid != errors.Is(err, fence.ErrInvalid) || got != c.want {
			t.Errorf("Interval(%v) = %v, %v; want %v (invalid: %v)", c.in, got, err, c.want, c.invalid)
		}
	}
}
