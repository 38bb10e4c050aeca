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

// Work under three keys holds them all for two TTLs (the session renews
// them); a takeover of one (an operator breaks it, another replica takes
// it) cancels the work with that key's loss as the cause, and RunAll frees
// the other two at once. On every locker.
func TestRunAllTakeoverOnBackends(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		sess, err := fence.NewSession(lockers[0], &fence.SessionOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{"acct-b", "acct-a", "log"}
		started := make(chan []fence.Lease, 1)
		done := make(chan error, 1)
		var cause error
		go func() {
			done <- guard.RunAll(t.Context(), sess, keys, func(ctx context.Context, hs []*fence.Handle) error {
				leases := make([]fence.Lease, len(hs))
				for i, h := range hs {
					leases[i] = h.Lease()
				}
				started <- leases
				select {
				case <-ctx.Done():
					cause = context.Cause(ctx)
					return cause
				case <-time.After(20 * ttl):
					return errors.New("the work ran on after a takeover")
				}
			}, nil)
		}()
		var job []fence.Lease
		select {
		case job = <-started:
		case err := <-done:
			t.Fatalf("RunAll returned before the work started: %v", err)
		}
		other := lockers[1]
		time.Sleep(2 * ttl)
		for _, l := range job {
			info, err := other.Inspect(t.Context(), l.Key)
			if err != nil || !info.Held || info.Token != l.Token {
				t.Fatalf("%s after 2 TTLs: %+v, %v; want held with token %d", l.Key, info, err, l.Token)
			}
		}
		if err := other.Break(t.Context(), "acct-a"); err != nil {
			t.Fatal(err)
		}
		taker, err := other.Acquire(t.Context(), "acct-a", ttl, nil)
		if err != nil {
			t.Fatalf("Acquire after Break: %v", err)
		}
		err = <-done
		lost, ok := errors.AsType[*fence.LeaseLostError](cause)
		if !ok || lost.Key != "acct-a" || !errors.Is(err, fence.ErrLeaseLost) {
			t.Fatalf("RunAll = %v, work's cause %v; want the loss of acct-a", err, cause)
		}
		if taker.Token <= job[1].Token {
			t.Errorf("taker's token %d; want more than the work's %d", taker.Token, job[1].Token)
		}
		for _, k := range []string{"acct-b", "log"} {
			if _, err := other.Acquire(t.Context(), k, ttl, nil); err != nil {
				t.Errorf("%s right after RunAll: %v; want it free", k, err)
			}
		}
	})
}
