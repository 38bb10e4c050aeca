package guard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
)

func TestNewRejectsImpossibleOptions(t *testing.T) {
	t.Parallel()
	s := time.Second
	tests := []struct {
		name  string
		opts  guard.Options
		field string
	}{
		{"negative TTL", guard.Options{TTL: -s}, "TTL"},
		{"negative acquire timeout", guard.Options{AcquireTimeout: -s}, "AcquireTimeout"},
		{"negative backoff", guard.Options{BackoffMin: -s}, "BackoffMin"},
		{"backoff min above max", guard.Options{BackoffMin: 2 * s, BackoffMax: s}, "BackoffMin"},
		{"renew interval above TTL/2", guard.Options{TTL: 30 * s, RenewInterval: 16 * s}, "RenewInterval"},
		{"negative renew interval", guard.Options{RenewInterval: -s}, "RenewInterval"},
		{"margin equal to TTL", guard.Options{TTL: 30 * s, SafetyMargin: 30 * s}, "SafetyMargin"},
		{"negative margin", guard.Options{SafetyMargin: -s}, "SafetyMargin"},
		{"deadline before first renewal", guard.Options{TTL: 30 * s, RenewInterval: 15 * s, SafetyMargin: 15 * s}, "SafetyMargin"},
		{"negative call timeout", guard.Options{CallTimeout: -s}, "CallTimeout"},
		{"negative release timeout", guard.Options{ReleaseTimeout: -s}, "ReleaseTimeout"},
	}
	locker := memory.New(nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, err := guard.New(locker, &tc.opts)
			var inv *fence.InvalidError
			if !errors.Is(err, fence.ErrInvalid) || !errors.As(err, &inv) || g != nil {
				t.Fatalf("New(%+v) = %v, %v; want ErrInvalid", tc.opts, g, err)
			}
			if inv.Field != tc.field {
				t.Errorf("error names field %q, want %q (%v)", inv.Field, tc.field, err)
			}
			// Run validates the same way, before touching the locker.
			if err := guard.Run(t.Context(), locker, "k", func(context.Context, *fence.Handle) error { return nil }, &tc.opts); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Run: %v, want ErrInvalid", err)
			}
		})
	}
}

func TestNewAcceptsDefaults(t *testing.T) {
	t.Parallel()
	locker := memory.New(nil)
	for _, opts := range []*guard.Options{nil, {}, {TTL: time.Second}, {TTL: 30 * time.Second, RenewInterval: 15 * time.Second, SafetyMargin: time.Second}, {BackoffMax: time.Millisecond}} {
		if _, err := guard.New(locker, opts); err != nil {
			t.Errorf("New(%+v): %v", opts, err)
		}
	}
	if _, err := guard.New(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil locker): %v, want ErrInvalid", err)
	}
}

// A TTL the locker refuses is reported at the first Do, by the locker.
func TestTTLOutOfLockerRange(t *testing.T) {
	t.Parallel()
	err := guard.Run(t.Context(), memory.New(nil), "k", func(context.Context, *fence.Handle) error { return nil },
		&guard.Options{TTL: 48 * time.Hour})
	if !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Run with a TTL above the memory locker's maximum: %v, want ErrInvalid", err)
	}
}
