package probetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// PublishNotice measures how soon a follower learns of a new value: a
// holder on Locker holder publishes a new value of a key it holds (ttl
// long enough for the whole run) while the driver of Locker follower
// (at its default probe interval) watches the key with NotifyRelease, as
// an election's follower does; the time from the return of Publish to
// the follower's notification is one sample, and the follower then reads
// the value with Inspect (not timed) to check it. Each Publish comes after
// a random pause of up to 100 ms, so that Publishes fall at random points
// of the probe cycle. It reports p50 and p99
// of the samples (run it with -benchtime 200x or more).
func PublishNotice(b *testing.B, holder, follower *fence.Locker, ttl time.Duration) {
	ctx := b.Context()
	n, ok := driver.LockerOf(follower).(driver.ReleaseNotifier)
	if !ok {
		b.Fatal("the follower's driver notifies nothing")
	}
	key := "publish-notice"
	lease, err := holder.Acquire(ctx, key, ttl, nil)
	if err != nil {
		b.Fatal(err)
	}
	c, stop, err := n.NotifyRelease(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	var samples []time.Duration
	for i := 0; b.Loop(); i++ {
		for len(c) > 0 {
			<-c
		}
		// Publish at a random point of the probe cycle.
		time.Sleep(rand.N(100 * time.Millisecond))
		value := fmt.Sprint("10.0.0.7:", i)
		if err := holder.Publish(ctx, lease, value); err != nil {
			b.Fatal(err)
		}
		published := time.Now()
		select {
		case <-c:
		case <-time.After(30 * time.Second):
			b.Fatalf("no notification 30s after Publish %d", i)
		}
		samples = append(samples, time.Since(published))
		info, err := follower.Inspect(ctx, key)
		if err != nil || info.Value != value {
			b.Fatalf("follower's Inspect after the notice = %+v, %v; want value %q", info, err, value)
		}
	}
	b.ReportMetric(ms(Percentile(samples, 50)), "notice_p50_ms")
	b.ReportMetric(ms(Percentile(samples, 99)), "notice_p99_ms")
	if err := holder.Release(ctx, lease); err != nil {
		b.Fatal(err)
	}
}
