package guard

import (
	"math/rand/v2"
	"time"
)

// backoff returns the jittered delay before retry n (n >= 1): a random
// duration in [d/2, d], where d = lo·2^(n-1) capped at hi.
func backoff(n int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < n && d < hi; i++ {
		if d > hi/2 {
			d = hi
			break
		}
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	return half + rand.N(d-half+1)
}
