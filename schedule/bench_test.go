package schedule_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/testlockers"
	"github.com/fencekit/fence/schedule"
)

// BenchmarkWindow measures one window run by one replica, with and
// without RetryWithin, side by side on memory and PostgreSQL: the store
// calls of the run (calls/window: the job's lock, the marks and, with
// RetryWithin, the look at the window before) and its time. Each
// iteration is a new window on a fake clock; the job does nothing.
//
//	go test -run '^$' -bench Window -count 5 ./schedule/
func BenchmarkWindow(b *testing.B) {
	for _, name := range []string{"memory", "postgres"} {
		var backend testlockers.Backend
		for _, be := range testlockers.Backends {
			if be.Name == name {
				backend = be
			}
		}
		for _, retry := range []time.Duration{0, retry} {
			sub := "RetryWithin0"
			if retry > 0 {
				sub = "RetryWithin"
			}
			b.Run(name+"/"+sub, func(b *testing.B) {
				clock := clocktest.New(window)
				l := backend.Lockers(b, 1, clock)[0]
				var calls atomic.Int64
				l.SetObserver(&fence.Observer{Call: func(ctx context.Context, _ fence.Call) (context.Context, func(fence.Token, error)) {
					calls.Add(1)
					return ctx, nil
				}})
				sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: atMost, Clock: clock})
				if err != nil {
					b.Fatal(err)
				}
				job, err := schedule.New(sess, "bench-"+testlockers.UniqueName(""), interval, nop, &schedule.Options{RetryWithin: retry})
				if err != nil {
					b.Fatal(err)
				}
				if out, err := job.Attempt(b.Context()); out != schedule.Ran || err != nil { // the key is made
					b.Fatalf("Attempt: %v, %v", out, err)
				}
				calls.Store(0)
				b.ResetTimer()
				for range b.N {
					clock.Advance(interval)
					if out, err := job.Attempt(b.Context()); out != schedule.Ran || err != nil {
						b.Fatalf("Attempt: %v, %v", out, err)
					}
				}
				b.ReportMetric(float64(calls.Load())/float64(b.N), "calls/window")
			})
		}
	}
}
