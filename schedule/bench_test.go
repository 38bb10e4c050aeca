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
// without RetryWithin, on memory and PostgreSQL: two jobs on one Locker,
// one with each setting, each running every window in turn, so that both
// see the same load. It reports the store calls of each run
// (calls/window: the job's lock, the marks and, with RetryWithin, the
// look at the window before), their time (ns/window) and the ratio of
// the times (retry/zero). Each iteration is a new window on a fake clock;
// the job does nothing.
//
//	go test -run '^$' -bench Window -benchtime 300x -count 5 ./schedule/
func BenchmarkWindow(b *testing.B) {
	for _, name := range []string{"memory", "postgres"} {
		var backend testlockers.Backend
		for _, be := range testlockers.Backends {
			if be.Name == name {
				backend = be
			}
		}
		b.Run(name, func(b *testing.B) {
			clock := clocktest.New(window)
			l := backend.Lockers(b, 1, clock)[0]
			var calls atomic.Int64
			l.SetObserver(&fence.Observer{Call: func(ctx context.Context, _ fence.Call) (context.Context, func(fence.Token, error)) {
				calls.Add(1)
				return ctx, nil
			}})
			var jobs [2]*schedule.Job
			for i, retry := range []time.Duration{0, retry} {
				sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: atMost, Clock: clock})
				if err != nil {
					b.Fatal(err)
				}
				if jobs[i], err = schedule.New(sess, testlockers.UniqueName("bench-"), interval, nop, &schedule.Options{RetryWithin: retry}); err != nil {
					b.Fatal(err)
				}
			}
			attempt := func(job *schedule.Job) (int64, time.Duration) {
				calls.Store(0)
				start := time.Now()
				if out, err := job.Attempt(b.Context()); out != schedule.Ran || err != nil {
					b.Fatalf("Attempt: %v, %v", out, err)
				}
				return calls.Load(), time.Since(start)
			}
			for _, job := range jobs {
				attempt(job) // the keys are made, and the first window has no window before
			}
			var n [2]int64
			var d [2]time.Duration
			b.ResetTimer()
			for i := range b.N {
				clock.Advance(interval)
				for k := range jobs {
					k = (k + i) % 2 // alternate which goes first
					c, t := attempt(jobs[k])
					n[k] += c
					d[k] += t
				}
			}
			b.ReportMetric(float64(n[0])/float64(b.N), "calls/window-zero")
			b.ReportMetric(float64(n[1])/float64(b.N), "calls/window-retry")
			b.ReportMetric(float64(d[0].Nanoseconds())/float64(b.N), "ns/window-zero")
			b.ReportMetric(float64(d[1].Nanoseconds())/float64(b.N), "ns/window-retry")
			b.ReportMetric(float64(d[1])/float64(d[0]), "retry/zero")
		})
	}
}
