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

// The session that Run takes its leases through rejects impossible
// settings, naming the field.
func TestSessionRejectsImpossibleOptions(t *testing.T) {
	t.Parallel()
	s := time.Second
	tests := []struct {
		name  string
		opts  fence.SessionOptions
		field string
	}{
		{"negative TTL", fence.SessionOptions{TTL: -s}, "TTL"},
		{"negative backoff", fence.SessionOptions{BackoffMin: -s}, "BackoffMin"},
		{"backoff min above max", fence.SessionOptions{BackoffMin: 2 * s, BackoffMax: s}, "BackoffMin"},
		{"renew interval above TTL/2", fence.SessionOptions{TTL: 30 * s, RenewInterval: 16 * s}, "RenewInterval"},
		{"negative renew interval", fence.SessionOptions{RenewInterval: -s}, "RenewInterval"},
		{"margin equal to TTL", fence.SessionOptions{TTL: 30 * s, SafetyMargin: 30 * s}, "SafetyMargin"},
		{"negative margin", fence.SessionOptions{SafetyMargin: -s}, "SafetyMargin"},
		{"deadline before first renewal", fence.SessionOptions{TTL: 30 * s, RenewInterval: 15 * s, SafetyMargin: 15 * s}, "SafetyMargin"},
		{"negative call timeout", fence.SessionOptions{CallTimeout: -s}, "CallTimeout"},
		{"negative release timeout", fence.SessionOptions{ReleaseTimeout: -s}, "ReleaseTimeout"},
	}
	locker := memory.New(nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sess, err := fence.NewSession(locker, &tc.opts)
			var inv *fence.InvalidError
			if !errors.Is(err, fence.ErrInvalid) || !errors.As(err, &inv) || sess != nil {
				t.Fatalf("NewSession(%+v) = %v, %v; want ErrInvalid", tc.opts, sess, err)
			}
			if inv.Field != tc.field {
				t.Errorf("error names field %q, want %q (%v)", inv.Field, tc.field, err)
			}
		})
	}
}

func TestSessionAcceptsDefaults(t *testing.T) {
	t.Parallel()
	locker := memory.New(nil)
	for _, opts := range []*fence.SessionOptions{nil, {}, {TTL: time.Second}, {TTL: 30 * time.Second, RenewInterval: 15 * time.Second, SafetyMargin: time.Second}, {BackoffMax: time.Millisecond}} {
		if _, err := fence.NewSession(locker, opts); err != nil {
			t.Errorf("NewSession(%+v): %v", opts, err)
		}
	}
}

// Run rejects a nil session, a nil function and a negative wait before
// touching the locker, naming the field.
func TestRunRejects(t *testing.T) {
	t.Parallel()
	sess, err := fence.NewSession(memory.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	nop := func(context.Context, *fence.Handle) error { return nil }
	tests := []struct {
		name  string
		s     *fence.Session
		fn    guard.Func
		opts  *fence.LockOptions
		field string
	}{
		{"nil session", nil, nop, nil, "session"},
		{"nil function", sess, nil, nil, "fn"},
		{"negative wait", sess, nop, &fence.LockOptions{Wait: -time.Second}, "Wait"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := guard.Run(t.Context(), tc.s, "k", tc.fn, tc.opts)
			var inv *fence.InvalidError
			if !errors.Is(err, fence.ErrInvalid) || !errors.As(err, &inv) {
				t.Fatalf("Run: %v, want ErrInvalid", err)
			}
			if inv.Field != tc.field {
				t.Errorf("error names field %q, want %q (%v)", inv.Field, tc.field, err)
			}
			if info, err := sess.Locker().Inspect(t.Context(), "k"); err != nil || info.Token.Valid() {
				t.Errorf("after Run: %+v, %v; want the key never taken", info, err)
			}
		})
	}
}

// A TTL the locker refuses is reported at the first Run, by the locker.
func TestTTLOutOfLockerRange(t *testing.T) {
	t.Parallel()
	sess, err := fence.NewSession(memory.New(nil), &fence.SessionOptions{TTL: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	err = guard.Run(t.Context(), sess, "k", func(context.Context, *fence.Handle) error { return nil }, nil)
	if !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Run with a TTL above the memory locker's maximum: %v, want ErrInvalid", err)
	}
}
