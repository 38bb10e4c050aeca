package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestReleaseWakesWaiters: a Session.Lock waiting for a key wakes when the
// holder releases it, whether the holder is the waiter's own Locker (its
// release signals at once) or another Locker on the file, as another
// process would be (the poller sees the free row). The waiters' own
// polling is off (an hour) and the holder's lease lasts an hour, so
// nothing else could wake them.
func TestReleaseWakesWaiters(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	waiterLocker := open(t, url, nil)
	busy := make(chan struct{}, 1)
	waiterLocker.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
		if e.Outcome == fence.Busy {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	}})
	for _, tc := range []struct {
		name   string
		holder *fence.Locker
	}{
		{"same locker", waiterLocker},
		{"other locker", open(t, url, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "wake-" + tc.name
			lease, err := tc.holder.Acquire(t.Context(), key, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := fence.NewSession(waiterLocker, &fence.SessionOptions{TTL: time.Hour, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close(context.Background())
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound on a broken run
			defer cancel()
			got := make(chan error, 1)
			go func() {
				h, err := sess.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
				if err == nil && h.Token() <= lease.Token {
					t.Errorf("the waiter's token %d is not above the holder's %d", h.Token(), lease.Token)
				}
				got <- err
			}()
			// The waiter finds the key busy, then waits.
			select {
			case <-busy:
			case err := <-got:
				t.Fatalf("the waiter returned before the release: %v", err)
			}
			if err := tc.holder.Release(t.Context(), lease); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("the waiter: %v", err)
			}
		})
	}
}
