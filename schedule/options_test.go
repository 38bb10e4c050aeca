package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/schedule"
)

func nop(context.Context, time.Time, *fence.Handle) error { return nil }

func TestNewRejects(t *testing.T) {
	t.Parallel()
	sess := newSession(t, memory.New(nil), nil)
	tests := []struct {
		name     string
		s        *fence.Session
		job      string
		interval time.Duration
		fn       schedule.Func
		opts     *schedule.Options
		field    string
	}{
		{"nil session", nil, "j", time.Hour, nop, nil, "session"},
		{"empty name", sess, "", time.Hour, nop, nil, "name"},
		{"nil function", sess, "j", time.Hour, nil, nil, "fn"},
		{"zero interval", sess, "j", 0, nop, nil, "interval"},
		{"negative interval", sess, "j", -time.Hour, nop, nil, "interval"},
		{"negative LockAtLeastFor", sess, "j", time.Hour, nop, &schedule.Options{LockAtLeastFor: -1}, "LockAtLeastFor"},
		{"LockAtLeastFor of a whole interval", sess, "j", time.Hour, nop, &schedule.Options{LockAtLeastFor: time.Hour}, "LockAtLeastFor"},
		{"negative offset", sess, "j", time.Hour, nop, &schedule.Options{Offset: -1}, "Offset"},
		{"offset of a whole interval", sess, "j", time.Hour, nop, &schedule.Options{Offset: time.Hour}, "Offset"},
		{"negative RetryWithin", sess, "j", time.Hour, nop, &schedule.Options{RetryWithin: -1}, "RetryWithin"},
		{"RetryWithin of a whole interval", sess, "j", time.Hour, nop, &schedule.Options{RetryWithin: time.Hour}, "RetryWithin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			job, err := schedule.New(tt.s, tt.job, tt.interval, tt.fn, tt.opts)
			var inv *fence.InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field || job != nil {
				t.Fatalf("New: %v, %v; want an InvalidError on %s", job, err, tt.field)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		interval, offset time.Duration
		t, want          string
	}{
		{time.Minute, 0, "2025-03-01T09:00:30Z", "2025-03-01T09:00:00Z"},
		{time.Minute, 0, "2025-03-01T09:00:00Z", "2025-03-01T09:00:00Z"},
		{time.Minute, 0, "2025-03-01T08:59:59.999999999Z", "2025-03-01T08:59:00Z"},
		{24 * time.Hour, 2 * time.Hour, "2025-03-01T01:59:59Z", "2025-02-28T02:00:00Z"},
		{24 * time.Hour, 2 * time.Hour, "2025-03-01T02:00:00Z", "2025-03-01T02:00:00Z"},
		{time.Hour, 0, "2025-03-01T10:30:00+02:00", "2025-03-01T08:00:00Z"},  // any zone in, UTC out
		{7 * time.Second, 0, "1969-12-31T23:59:59Z", "1969-12-31T23:59:53Z"}, // before the epoch: floor, not truncation
		{250 * time.Millisecond, 0, "2025-03-01T09:00:00.3Z", "2025-03-01T09:00:00.25Z"},
	}
	for _, tt := range tests {
		job, err := schedule.New(newSession(t, memory.New(nil), nil), "j", tt.interval, nop, &schedule.Options{Offset: tt.offset})
		if err != nil {
			t.Fatal(err)
		}
		got := job.Window(at(tt.t))
		if !got.Equal(at(tt.want)) || got.Location() != time.UTC {
			t.Errorf("Window(%s) every %v + %v = %v, want %s in UTC", tt.t, tt.interval, tt.offset, got, tt.want)
		}
	}
}

// Windows shorter than a second get marks of their own: the mark's key
// carries the fraction.
func TestSubsecondWindowsMarkedApart(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	store := memory.New(&memory.Options{Clock: clock})
	runs := 0
	sess := newSession(t, store, &fence.SessionOptions{TTL: 100 * time.Millisecond, Clock: clock})
	job, err := schedule.New(sess, "j", 250*time.Millisecond, func(context.Context, time.Time, *fence.Handle) error {
		runs++
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if out, err := job.Attempt(t.Context()); out != schedule.Ran || err != nil {
			t.Fatalf("Attempt at %v: %v, %v; want ran", clock.Now(), out, err)
		}
		clock.Advance(250 * time.Millisecond)
	}
	for _, key := range []string{"j:2025-03-01T09:00:00Z", "j:2025-03-01T09:00:00.25Z", "j:2025-03-01T09:00:00.5Z", "j:2025-03-01T09:00:00.75Z"} {
		if info, err := store.Inspect(t.Context(), key); err != nil || !info.Token.Valid() {
			t.Errorf("mark %q: %+v, %v; want a token", key, info, err)
		}
	}
	if runs != 4 {
		t.Fatalf("%d runs, want 4", runs)
	}
}
