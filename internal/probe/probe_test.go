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

// TestPublished: a new value wakes the waiters (an election's
// followers); a renewal that keeps the value and a new lease without one
// do not count as one.
func TestPublished(t *testing.T) {
	t.Parallel()
	held := Reading{Version: "1", Holder: "a 1"}
	for _, c := range []struct {
		name string
		a, b Reading
		want bool
	}{
		{"unchanged", held, held, false},
		{"published", held, Reading{Version: "2", Holder: "a 1", Value: "x"}, true},
		{"published without a new version (DynamoDB)", Reading{Version: "1", Holder: "a 1", Value: "x"}, Reading{Version: "1", Holder: "a 1", Value: "y"}, true},
		{"cleared", Reading{Version: "1", Holder: "a 1", Value: "x"}, Reading{Version: "2", Holder: "a 1"}, true},
		{"renewed with its value", Reading{Version: "1", Holder: "a 1", Value: "x"}, Reading{Version: "2", Holder: "a 1", Value: "x"}, false},
		{"another lease with another value", Reading{Version: "1", Holder: "a 1", Value: "x"}, Reading{Version: "2", Holder: "b 2", Value: "y"}, true},
		{"taken and published between reads", Reading{Version: "1"}, Reading{Version: "2", Holder: "b 2", Value: "y"}, true},
		{"taken while free", Reading{Version: "1"}, Reading{Version: "2", Holder: "b 2"}, false},
		{"released with a value", Reading{Version: "1", Holder: "a 1", Value: "x"}, Reading{Version: "2"}, false},
	} {
		if got := published(c.a, c.b); got != c.want {
			t.Errorf("%s: published = %v; want %v", c.name, got, c.want)
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
