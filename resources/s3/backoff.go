package s3

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff returns the jittered pause before retry n (n >= 1): a random
// duration in [d/2, d], where d = min·2^(n-1) capped at max.
func (b *Bucket) backoff(n int) time.Duration {
	d := b.minBackoff
	for i := 1; i < n && d < b.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, b.maxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// pause waits before retry n, or until ctx is done.
func (b *Bucket) pause(ctx context.Context, n int) error {
	t := time.NewTimer(b.backoff(n))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}
