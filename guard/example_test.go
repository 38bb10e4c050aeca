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
)

// Run a job under a lease. The token goes with every write to the
// protected resource.
func ExampleRun() {
	ctx := context.Background()
	locker := memory.New(nil)
	err := guard.Run(ctx, locker, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
		fmt.Printf("writing the report with token %d\n", h.Token())
		return nil
	}, nil)
	fmt.Println("err:", err)
	// Output:
	// writing the report with token 1
	// err: <nil>
}

// A second replica finds the job running and skips its turn.
func ExampleGuard_Do_skipWhenBusy() {
	ctx := context.Background()
	locker := memory.New(nil)
	g, err := guard.New(locker, &guard.Options{TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	_ = g.Do(ctx, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
		// Meanwhile another replica tries the same job.
		err := g.Do(ctx, "nightly-report", func(context.Context, *fence.Handle) error {
			fmt.Println("never printed")
			return nil
		})
		if errors.Is(err, fence.ErrHeld) {
			fmt.Println("second replica: already running, skipped")
		}
		fmt.Println("first replica: done")
		return nil
	})
	// Output:
	// second replica: already running, skipped
	// first replica: done
}

// The work notices the loss of its lease through its context's cause. Here
// an operator breaks the lock; the next renewal finds the lease gone. A
// fake clock stands in for the wait until that renewal.
func ExampleGuard_Do_leaseLost() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	locker := memory.New(&memory.Options{Clock: clock})
	g, err := guard.New(locker, &guard.Options{TTL: 30 * time.Second, Clock: clock})
	if err != nil {
		panic(err)
	}
	err = g.Do(ctx, "ledger", func(ctx context.Context, h *fence.Handle) error {
		_ = locker.Break(ctx, "ledger") // an operator frees the lock
		_ = clock.WaitTimers(ctx, 2)    // the renewer is waiting
		clock.Advance(10 * time.Second) // the next renewal is due
		<-ctx.Done()
		fmt.Println("work stopped:", context.Cause(ctx))
		return context.Cause(ctx)
	})
	fmt.Println("lost:", errors.Is(err, fence.ErrLeaseLost))
	// Output:
	// work stopped: fence: lease on "ledger" (token 1) lost: fence/memory: renew "ledger": lease not held: released or broken
	// lost: true
}
