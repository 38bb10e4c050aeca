package guard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// A guarded job that runs for three TTLs renews its lease all along,
// returns nil, and leaves the key free at once: another replica takes it
// right after Run returns, with a higher token. On every locker.
func TestLongJobOnBackends(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		var job fence.Lease
		renewals := 0
		lockers[0].SetObserver(&fence.Observer{
			Renewed: func(e fence.RenewedEvent) {
				if e.Err == nil {
					renewals++
				}
			},
		})
		sess, err := fence.NewSession(lockers[0], &fence.SessionOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		err = guard.Run(t.Context(), sess, "long-job", func(ctx context.Context, h *fence.Handle) error {
			lease := h.Lease()
			job = lease
			select {
			case <-time.After(3 * ttl):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, nil)
		if err != nil {
			t.Fatalf("Run of a job of 3 TTLs (%v): %v", 3*ttl, err)
		}
		if renewals < 3 {
			t.Errorf("%d renewals in 3 TTLs; want at least 3", renewals)
		}
		next, err := lockers[1].Acquire(t.Context(), "long-job", ttl, nil)
		if err != nil {
			t.Fatalf("Acquire right after the job: %v; want the key free at once", err)
		}
		if next.Token <= job.Token {
			t.Errorf("next token %d; want more than the job's %d", next.Token, job.Token)
		}
	})
}

// A takeover while the job runs (an operator breaks the key and another
// replica takes it) cancels the job's context with a cause matching
// fence.ErrLeaseLost by the next renewal, and Run reports the loss; the new
// holder keeps the key. On every locker.
func TestTakeoverCancelsJobOnBackends(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		started := make(chan fence.Lease, 1)
		var cause error
		sess, err := fence.NewSession(lockers[0], &fence.SessionOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- guard.Run(t.Context(), sess, "taken", func(ctx context.Context, h *fence.Handle) error {
				lease := h.Lease()
				started <- lease
				select {
				case <-ctx.Done():
					cause = context.Cause(ctx)
					return cause
				case <-time.After(10 * ttl):
					return errors.New("the job ran on after a takeover")
				}
			}, nil)
		}()
		var job fence.Lease
		select {
		case job = <-started:
		case err := <-done:
			t.Fatalf("Run returned before the job started: %v", err)
		}
		other := lockers[1]
		if err := other.Break(t.Context(), "taken"); err != nil {
			t.Fatalf("Break: %v", err)
		}
		taker, err := other.Acquire(t.Context(), "taken", ttl, nil)
		if err != nil {
			t.Fatalf("Acquire after Break: %v", err)
		}
		err = <-done
		if !errors.Is(err, fence.ErrLeaseLost) || !errors.Is(cause, fence.ErrLeaseLost) {
			t.Fatalf("Run = %v, job's cause %v; want both matching fence.ErrLeaseLost", err, cause)
		}
		if taker.Token <= job.Token {
			t.Errorf("taker's token %d; want more than the job's %d", taker.Token, job.Token)
		}
		info, err := other.Inspect(t.Context(), "taken")
		if err != nil || !info.Held || info.Owner != taker.Owner || info.Token != taker.Token {
			t.Errorf("after the job: %+v, %v; want the taker still holding the key", info, err)
		}
	})
}
