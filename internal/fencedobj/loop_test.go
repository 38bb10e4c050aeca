package fencedobj

import (
	"context"
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

var errStore = errors.New("store: refused")

func same(err error) error { return err }

// TestLoopStale: a lower token is a stale-token error until an attempt
// may have been applied, and an unknown outcome after.
func TestLoopStale(t *testing.T) {
	t.Parallel()
	l := &Loop{Key: "k", Token: 3}
	if err := l.Stale(5); !errors.Is(err, fence.ErrStaleToken) || errors.Is(err, fence.ErrUnknownOutcome) {
		t.Fatalf("Stale before any lost answer: %v; want a stale-token error only", err)
	}
	if err := l.Failed(t.Context(), errStore, "e1", false, true, same); err != nil {
		t.Fatalf("Failed(ambiguous) = %v; want a retry", err)
	}
	if !l.Maybe || l.Conditioned != "e1" || l.LastErr != errStore {
		t.Fatalf("after an ambiguous failure: %+v", l)
	}
	err := l.Stale(5)
	var uo *fence.UnknownOutcomeError
	if !errors.As(err, &uo) || uo.Highest != 5 || !errors.Is(err, errStore) {
		t.Fatalf("Stale after a lost answer: %v; want an unknown outcome with highest 5 wrapping the lost answer", err)
	}
}

// TestLoopFailed: a lost race retries and resets the count of lost
// answers, MaxLost lost answers in a row give up, and any other error is
// told and returned.
func TestLoopFailed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := &Loop{Key: "k", Token: 3}
	for range MaxLost - 1 {
		if err := l.Failed(ctx, errStore, "e", false, true, same); err != nil {
			t.Fatalf("Failed(ambiguous) = %v; want a retry", err)
		}
	}
	if err := l.Failed(ctx, errStore, "e", true, false, same); err != nil {
		t.Fatalf("Failed(not applied) = %v; want a retry", err)
	}
	for range MaxLost - 1 {
		if err := l.Failed(ctx, errStore, "e", false, true, same); err != nil {
			t.Fatalf("Failed(ambiguous) after a lost race = %v; want a retry", err)
		}
	}
	if err := l.Failed(ctx, errStore, "e", false, true, same); !errors.Is(err, fence.ErrUnknownOutcome) {
		t.Fatalf("Failed after %d lost answers in a row = %v; want an unknown outcome", MaxLost, err)
	}
	told := errors.New("told")
	if err := (&Loop{}).Failed(ctx, errStore, "e", false, false, func(error) error { return told }); err != told {
		t.Fatalf("Failed(other) = %v; want the told error", err)
	}
}

// TestLoopCtxDone: once ctx is done, every failure returns, with ctx's
// error; after a possible application, as an unknown outcome.
func TestLoopCtxDone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l := &Loop{Key: "k", Token: 3}
	if err := l.Failed(ctx, errStore, "e", true, false, same); !errors.Is(err, context.Canceled) || errors.Is(err, fence.ErrUnknownOutcome) {
		t.Errorf("Failed(not applied) after cancel = %v; want context.Canceled only", err)
	}
	if err := l.ReadFailed(ctx, errStore); !errors.Is(err, context.Canceled) || !errors.Is(err, errStore) {
		t.Errorf("ReadFailed after cancel = %v; want context.Canceled and the read's error", err)
	}
	if err := l.Failed(ctx, errStore, "e", false, false, same); !errors.Is(err, context.Canceled) || !errors.Is(err, fence.ErrUnknownOutcome) {
		t.Errorf("Failed after cancel = %v; want an unknown outcome matching context.Canceled", err)
	}
	if err := l.Pause(ctx, 1); !errors.Is(err, context.Canceled) || !errors.Is(err, fence.ErrUnknownOutcome) {
		t.Errorf("Pause after cancel = %v; want an unknown outcome matching context.Canceled", err)
	}
	if err := l.Pause(ctx, 0); err != nil {
		t.Errorf("Pause before the first attempt = %v; want no wait", err)
	}
}
