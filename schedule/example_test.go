package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
	"github.com/fencekit/fence/schedule"
)

// Every replica runs the same Job; Run attempts each window at its start.
// Here the job stops the replica after its first run.
func ExampleJob_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	// The session's TTL is how long the lock stays taken after its
	// holder dies (ShedLock's lockAtMostFor).
	sess, err := fence.NewSession(memory.New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	job, err := schedule.New(sess, "nightly-report", 24*time.Hour,
		func(ctx context.Context, window time.Time, h *fence.Handle) error {
			fmt.Println("writing the report with token", h.Token())
			cancel()
			return nil
		}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("run ended:", job.Run(ctx))
	// Output:
	// writing the report with token 1
	// run ended: context canceled
}

// Two replicas attempt the same daily window, which starts at 02:00 UTC;
// the job runs once. A fake clock stands in for the time of day.
func ExampleJob_Attempt() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2025, 3, 1, 2, 30, 0, 0, time.UTC))
	locker := memory.New(&memory.Options{Clock: clock})
	report := func(ctx context.Context, window time.Time, h *fence.Handle) error {
		fmt.Printf("report for the window of %s, token %d\n", window.Format(time.RFC3339), h.Token())
		return nil
	}
	for _, replica := range []string{"a", "b"} {
		sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: time.Minute, Clock: clock})
		if err != nil {
			panic(err)
		}
		job, err := schedule.New(sess, "nightly-report", 24*time.Hour, report, &schedule.Options{Offset: 2 * time.Hour})
		if err != nil {
			panic(err)
		}
		out, err := job.Attempt(ctx)
		fmt.Printf("replica %s: %v, %v\n", replica, out, err)
	}
	// Output:
	// report for the window of 2025-03-01T02:00:00Z, token 1
	// replica a: ran, <nil>
	// replica b: done, <nil>
}

// With RetryWithin, a window whose run did not finish runs again. Here
// replica a is stopped mid-run, as by SIGTERM in a rolling deploy; replica
// b runs the window again under a higher token, so the report refuses a's
// late write; replica c finds the window done.
func ExampleOptions_retryWithin() {
	clock := clocktest.New(time.Date(2025, 3, 1, 2, 5, 0, 0, time.UTC))
	locker := memory.New(&memory.Options{Clock: clock})
	report := memres.New(nil)
	newReplica := func(name string, stop context.CancelFunc) *schedule.Job {
		sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: time.Minute, Clock: clock})
		if err != nil {
			panic(err)
		}
		job, err := schedule.New(sess, "nightly-report", 24*time.Hour,
			func(ctx context.Context, window time.Time, h *fence.Handle) error {
				fmt.Printf("%s writes the report with token %d\n", name, h.Token())
				if err := report.Put(ctx, "report", h.Token(), []byte(name)); err != nil {
					return err
				}
				if stop != nil {
					stop() // the replica is stopped before the job is over
					<-ctx.Done()
					return context.Cause(ctx)
				}
				return nil
			},
			&schedule.Options{
				Offset:      2 * time.Hour, // windows start at 02:00 UTC
				RetryWithin: time.Hour,     // a rerun starts by 03:00 or not at all
				Observer: &schedule.Observer{Attempted: func(e schedule.AttemptEvent) {
					fmt.Printf("%s: %v, finished %v, %v\n", name, e.Outcome, e.Finished, e.Err)
				}},
			})
		if err != nil {
			panic(err)
		}
		return job
	}

	ctx, stop := context.WithCancel(context.Background())
	newReplica("a", stop).Attempt(ctx)
	newReplica("b", nil).Attempt(context.Background())
	newReplica("c", nil).Attempt(context.Background())

	err := report.Put(context.Background(), "report", 1, []byte("a, late"))
	fmt.Println("a's late write refused:", errors.Is(err, fence.ErrStaleToken))
	// Output:
	// a writes the report with token 1
	// a: ran, finished false, context canceled
	// b writes the report with token 2
	// b: retried, finished true, <nil>
	// c: done, finished false, <nil>
	// a's late write refused: true
}
