package guard_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// Run a job under a lease. The token goes with every write to the
// protected resource.
func ExampleRun() {
	ctx := context.Background()
	sess, err := fence.NewSession(memory.New(nil), nil) // one per application
	if err != nil {
		panic(err)
	}
	err = guard.Run(ctx, sess, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
		fmt.Printf("writing the report with token %d\n", h.Token())
		return nil
	}, nil)
	fmt.Println("err:", err)
	// Output:
	// writing the report with token 1
	// err: <nil>
}

// A second replica finds the job running and skips its turn.
func ExampleRun_skipWhenBusy() {
	ctx := context.Background()
	sess, err := fence.NewSession(memory.New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	_ = guard.Run(ctx, sess, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
		// Meanwhile another replica tries the same job.
		err := guard.Run(ctx, sess, "nightly-report", func(context.Context, *fence.Handle) error {
			fmt.Println("never printed")
			return nil
		}, nil)
		if errors.Is(err, fence.ErrHeld) {
			fmt.Println("second replica: already running, skipped")
		}
		fmt.Println("first replica: done")
		return nil
	}, nil)
	// Output:
	// second replica: already running, skipped
	// first replica: done
}

// A replica waits up to a minute for the job's lock instead of skipping
// its turn.
func ExampleRun_wait() {
	ctx := context.Background()
	sess, err := fence.NewSession(memory.New(nil), nil)
	if err != nil {
		panic(err)
	}
	err = guard.Run(ctx, sess, "ledger", func(ctx context.Context, h *fence.Handle) error {
		fmt.Println("posting with token", h.Token())
		return nil
	}, &fence.LockOptions{Wait: time.Minute})
	fmt.Println("err:", err)
	// Output:
	// posting with token 1
	// err: <nil>
}

// The work notices the loss of its lease through its context's cause. Here
// an operator breaks the lock; the next renewal finds the lease gone. A
// fake clock stands in for the wait until that renewal.
func ExampleRun_leaseLost() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	locker := memory.New(&memory.Options{Clock: clock})
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 30 * time.Second, Clock: clock})
	if err != nil {
		panic(err)
	}
	err = guard.Run(ctx, sess, "ledger", func(ctx context.Context, h *fence.Handle) error {
		_ = locker.Break(ctx, "ledger") // an operator frees the lock
		_ = clock.WaitTimers(ctx, 2)    // the keepalive is waiting
		clock.Advance(10 * time.Second) // the next renewal is due
		<-ctx.Done()
		fmt.Println("work stopped:", context.Cause(ctx))
		return context.Cause(ctx)
	}, nil)
	fmt.Println("lost:", errors.Is(err, fence.ErrLeaseLost))
	// Output:
	// work stopped: fence: lease on "ledger" (token 1) lost: fence/memory: renew "ledger": lease not held: released or broken
	// lost: true
}

// The work writes through a resource bound to its handle, so every write
// carries the run's token. A write of an earlier run that arrives late
// (its worker paused past its lease) is refused.
func ExampleRun_fencedWrite() {
	ctx := context.Background()
	sess, err := fence.NewSession(memory.New(nil), nil)
	if err != nil {
		panic(err)
	}
	reports := memres.New(nil)
	var late *fence.Bound // what a paused first run still holds
	for _, body := range []string{"run 1", "run 2"} {
		err := guard.Run(ctx, sess, "report/daily", func(ctx context.Context, h *fence.Handle) error {
			report, err := fence.Bind(reports, h, nil)
			if err != nil {
				return err
			}
			if late == nil {
				late = report
			}
			return report.Put(ctx, []byte(body))
		}, nil)
		fmt.Println(body+":", err)
	}

	err = late.Put(ctx, []byte("run 1, late"))
	fmt.Println("late write refused:", errors.Is(err, fence.ErrStaleToken))
	value, token, _ := reports.Get(ctx, "report/daily")
	fmt.Printf("%s (token %d)\n", value, token)
	// Output:
	// run 1: <nil>
	// run 2: <nil>
	// late write refused: true
	// run 2 (token 2)
}

// A transfer between two accounts runs under both accounts' locks, taken
// all or nothing; each account is written with its own lock's token.
func ExampleRunAll() {
	ctx := context.Background()
	sess, err := fence.NewSession(memory.New(nil), nil)
	if err != nil {
		panic(err)
	}
	accounts := memres.New(nil)
	err = guard.RunAll(ctx, sess, []string{"acct/bob", "acct/alice"}, func(ctx context.Context, hs []*fence.Handle) error {
		bob, alice := hs[0], hs[1]
		if err := accounts.Put(ctx, bob.Key(), bob.Token(), []byte("70")); err != nil {
			return err
		}
		fmt.Printf("bob written with token %d, alice with token %d\n", bob.Token(), alice.Token())
		return accounts.Put(ctx, alice.Key(), alice.Token(), []byte("130"))
	}, nil)
	fmt.Println("err:", err)
	// Output:
	// bob written with token 1, alice with token 1
	// err: <nil>
}
