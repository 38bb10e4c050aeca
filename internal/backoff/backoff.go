// Package backoff is the one jittered, doubling backoff every retry loop of
// fence uses: the guard and the election between attempts, the cloud
// lockers and resources between tries of one request, the SQL helpers
// between transaction attempts.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy describes doubling waits: the first is First, each next one twice
// the last, none longer than Max (Max 0 means First, a constant wait).
type Policy struct {
	First time.Duration
	Max   time.Duration
}

// Delay returns the jittered wait before retry n (n >= 1): a random
// duration in [d/2, d], where d = First·2^(n-1), capped at Max.
func (p Policy) Delay(n int) time.Duration {
	hi := max(p.Max, p.First)
	d := p.First
	for i := 1; i < n && d < hi; i++ {
		if d > hi/2 {
			d = hi
			break
		}
		d *= 2
	}
	return Jitter(min(d, hi))
}

// Jitter returns a random duration in [d/2, d]; d itself when d <= 0.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// Sleep waits d, or until ctx is done, whichever comes first, and returns
// ctx.Err() in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
