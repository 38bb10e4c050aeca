// Package handoffbench holds the loop of a locker package's
// BenchmarkHandoff: a waiter blocked in another client, the holder
// releases, the time until the waiter's lock returns, for fence and for
// other ways to lock the same store, side by side in one run.
//
// A package's benchmark builds a Peer for fence (Fence, on two sessions
// of Lockers of their own on the same store) and one for each way to
// compare it with, and calls Run:
//
//	func BenchmarkHandoff(b *testing.B) {
//		handoffbench.Run(b, handoffbench.Fence(open(), open(), "k"), floorPeer(b))
//	}
package handoffbench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// Peer is one way to hand a key from a holder to a waiter in another
// client: Take makes the holder hold the key, Wait blocks until the
// waiter holds it, Release frees the holder's lock, and Done frees the
// waiter's.
type Peer struct {
	Name                      string
	Take, Release, Wait, Done func(ctx context.Context) error
}

// Fence returns the Peer named "fence" on key: the holder takes it with
// holder's Session.Lock, the waiter waits for it in waiter's
// Session.Lock with fence.WaitForever, and each frees it with its
// Handle's Release.
func Fence(holder, waiter *fence.Session, key string) Peer {
	var held, got *fence.Handle
	return Peer{Name: "fence",
		Take: func(ctx context.Context) (err error) { held, err = holder.Lock(ctx, key, nil); return err },
		Wait: func(ctx context.Context) (err error) {
			got, err = waiter.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
			return err
		},
		Release: func(ctx context.Context) error { return held.Release(ctx) },
		Done:    func(ctx context.Context) error { return got.Release(ctx) },
	}
}

// Run hands off once with each peer per iteration, in rotating order, so
// that all share the machine's moods: Take, Wait in a goroutine of its
// own, 20 ms for the waiter to be waiting, then the time from Release to
// Wait's return; Done after it. Before timing, each peer hands off once
// (connections, scripts, subscriptions). It reports each peer's p50 and
// p99 (NAME-p50-µs, NAME-p99-µs) and the ratio of the first peer's p50 to
// each other's (FIRST/NAME-p50). Run it with -benchtime 200x or more.
func Run(b *testing.B, peers ...Peer) {
	ctx := b.Context()
	lat := make([][]time.Duration, len(peers))
	handoff := func(p Peer) time.Duration {
		if err := p.Take(ctx); err != nil {
			b.Fatalf("%s: take: %v", p.Name, err)
		}
		woke := make(chan time.Time, 1)
		errc := make(chan error, 1)
		go func() {
			err := p.Wait(ctx)
			woke <- time.Now()
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond) // the waiter is waiting
		start := time.Now()
		if err := p.Release(ctx); err != nil {
			b.Fatalf("%s: release: %v", p.Name, err)
		}
		end := <-woke
		if err := <-errc; err != nil {
			b.Fatalf("%s: wait: %v", p.Name, err)
		}
		if err := p.Done(ctx); err != nil {
			b.Fatalf("%s: release by the waiter: %v", p.Name, err)
		}
		return end.Sub(start)
	}
	for i := range peers { // warm
		handoff(peers[i])
	}
	for i := 0; b.Loop(); i++ {
		for j := range peers {
			k := (i + j) % len(peers)
			lat[k] = append(lat[k], handoff(peers[k]))
		}
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	for j, p := range peers {
		b.ReportMetric(float64(pct(lat[j], 0.5).Microseconds()), p.Name+"-p50-µs")
		b.ReportMetric(float64(pct(lat[j], 0.99).Microseconds()), p.Name+"-p99-µs")
		if j > 0 {
			b.ReportMetric(float64(pct(lat[0], 0.5))/float64(pct(lat[j], 0.5)), peers[0].Name+"/"+p.Name+"-p50")
		}
	}
}
