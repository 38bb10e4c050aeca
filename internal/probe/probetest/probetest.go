// Package probetest holds the benchmarks that the cloud lockers share:
// the hand-off of the lockers whose waiters probe (lockers/dynamo,
// lockers/gcs, lockers/azblob), and how soon a follower sees a Publish.
package probetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// Block is the number of hand-offs of each mode over which one ratio of
// medians is taken: 200 hand-offs make five blocks.
const Block = 40

// HandOff measures the hand-off between clients: a holder on Locker
// holder releases a key for which a Session.Lock waits on another Locker,
// and the time from the return of the release to the return of the
// waiter's Lock is one sample. Each iteration makes one hand-off to
// probed (a Locker that probes, at its default interval) and one to
// polled (the same store with probes off, which polls at the session's
// default PollInterval), so the two modes alternate in one run. Sessions
// use a one-minute TTL and default settings otherwise. The holder holds
// the key for a random 5 to 105 ms after the waiter's first busy attempt,
// so that releases fall at random points of the probe and poll cycles.
//
// It reports p50 and p99 of each mode over the whole run (run it with
// -benchtime 200x or more), and the ratio probed/polled of the medians of
// each block of Block hand-offs: its median, least and greatest.
func HandOff(b *testing.B, holder, probed, polled *fence.Locker) {
	ttl := &fence.SessionOptions{TTL: time.Minute}
	holders := waittest.NewSession(b, holder, ttl)
	type mode struct {
		name    string
		waiters *fence.Session
		busy    chan struct{}
		samples []time.Duration
	}
	modes := []*mode{{name: "probe"}, {name: "poll"}}
	for i, l := range []*fence.Locker{probed, polled} {
		m := modes[i]
		m.busy = make(chan struct{}, 1)
		l.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
			if e.Outcome == fence.Busy {
				select {
				case m.busy <- struct{}{}:
				default:
				}
			}
		}})
		m.waiters = waittest.NewSession(b, l, ttl)
	}
	ctx := b.Context()
	key := "hand-off"
	for b.Loop() {
		for _, m := range modes {
			// The key is free; waiting only retries a failed call.
			h, err := holders.Lock(ctx, key, &fence.LockOptions{Wait: 30 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan waittest.Result, 1)
			go func() {
				w, err := m.waiters.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
				got <- waittest.Result{Handle: w, Err: err, At: time.Now()}
			}()
			<-m.busy
			time.Sleep(5*time.Millisecond + rand.N(100*time.Millisecond))
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
			released := time.Now()
			r := <-got
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			m.samples = append(m.samples, r.At.Sub(released))
			if err := r.Handle.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	probe, poll := modes[0].samples, modes[1].samples
	var ratios []float64
	var blocks []string
	for i := 0; i+Block <= len(probe); i += Block {
		r := float64(Percentile(probe[i:i+Block], 50)) / float64(Percentile(poll[i:i+Block], 50))
		ratios = append(ratios, r)
		blocks = append(blocks, fmt.Sprintf("%.3f", r))
	}
	for _, m := range modes {
		b.ReportMetric(ms(Percentile(m.samples, 50)), m.name+"_p50_ms")
		b.ReportMetric(ms(Percentile(m.samples, 99)), m.name+"_p99_ms")
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "ratio_med")
		b.ReportMetric(ratios[0], "ratio_min")
		b.ReportMetric(ratios[len(ratios)-1], "ratio_max")
		b.Logf("probe/poll p50 per block of %d: %s", Block, strings.Join(blocks, " "))
	}
}

// Percentile returns the p-th percentile (nearest rank) of samples.
func Percentile(samples []time.Duration, p float64) time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
