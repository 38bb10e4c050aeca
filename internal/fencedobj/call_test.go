package fencedobj

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// TestNewBackoff: zero takes the defaults, and negative values or a
// minimum above the maximum are refused.
func TestNewBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		min, max, first, last time.Duration
	}{
		{0, 0, 10 * time.Millisecond, time.Second},
		{time.Millisecond, 0, time.Millisecond, time.Second},
		{0, 20 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond},
		{time.Second, time.Second, time.Second, time.Second},
	} {
		p, err := NewBackoff(tc.min, tc.max)
		if err != nil || p.First != tc.first || p.Max != tc.last {
			t.Errorf("NewBackoff(%v, %v) = %+v, %v; want %v to %v", tc.min, tc.max, p, err, tc.first, tc.last)
		}
	}
	for _, tc := range [][2]time.Duration{{-1, 0}, {0, -1}, {2 * time.Second, 0}, {0, time.Millisecond}} {
		if _, err := NewBackoff(tc[0], tc[1]); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("NewBackoff(%v, %v) = %v; want fence.ErrInvalid", tc[0], tc[1], err)
		}
	}
}

// TestDriverOfNil: a nil resource is refused with fence.ErrInvalid (the
// packages' input tests cover a resource of another backend).
func TestDriverOfNil(t *testing.T) {
	t.Parallel()
	if _, err := DriverOf[driver.Resource](nil, "x.New"); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("DriverOf(nil) = %v; want fence.ErrInvalid", err)
	}
}
