package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/lockers/memory"
)

// Take a lock, do the work with its token, release it. The next holder
// gets a higher token.
func Example() {
	ctx := context.Background()
	locker := memory.New(nil)

	lease, err := locker.Acquire(ctx, "reports/daily", 30*time.Second, nil)
	if err != nil {
		fmt.Println("acquire:", err)
		return
	}
	// Pass lease.Token with every write to a fenced resource.
	fmt.Println("acquired with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil {
		fmt.Println("release:", err)
		return
	}

	next, err := locker.Acquire(ctx, "reports/daily", 30*time.Second, nil)
	if err != nil {
		fmt.Println("acquire:", err)
		return
	}
	fmt.Println("next holder's token", next.Token)
	// Output:
	// acquired with token 1
	// next holder's token 2
}

// Acquire never waits: a busy key gets an error matching fence.ErrHeld that
// says who holds it.
func ExampleLocker_Acquire_busy() {
	ctx := context.Background()
	locker := memory.New(nil)

	_, err := locker.Acquire(ctx, "ledger", time.Minute, &fence.AcquireOptions{Owner: "worker-1"})
	if err != nil {
		fmt.Println("acquire:", err)
		return
	}
	_, err = locker.Acquire(ctx, "ledger", time.Minute, &fence.AcquireOptions{Owner: "worker-2"})
	fmt.Println("busy:", errors.Is(err, fence.ErrHeld))
	if held, ok := errors.AsType[*fence.HeldError](err); ok {
		fmt.Printf("held by %s with token %d\n", held.Owner, held.Token)
	}
	// Output:
	// busy: true
	// held by worker-1 with token 1
}

// A lease that expires is taken over with a higher token, and the old
// holder can neither renew nor release it: a resource that checks tokens
// now refuses the old holder's writes.
func ExampleLocker_Renew_afterExpiry() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	locker := memory.New(&memory.Options{Clock: clock})

	old, _ := locker.Acquire(ctx, "ledger", 10*time.Second, nil)
	clock.Advance(11 * time.Second) // the holder paused longer than its lease
	lease, _ := locker.Acquire(ctx, "ledger", 10*time.Second, nil)
	fmt.Println("old token", old.Token, "new token", lease.Token)

	_, err := locker.Renew(ctx, old)
	fmt.Println("old holder renews:", errors.Is(err, fence.ErrNotHeld))
	err = locker.Release(ctx, old)
	fmt.Println("old holder releases:", errors.Is(err, fence.ErrNotHeld))

	info, _ := locker.Inspect(ctx, "ledger")
	fmt.Println("still held by the new holder:", info.Held && info.Owner == lease.Owner)
	// Output:
	// old token 1 new token 2
	// old holder renews: true
	// old holder releases: true
	// still held by the new holder: true
}

// An operator breaks a stuck lock; the next holder's token is higher than
// the broken holder's.
func ExampleLocker_Break() {
	ctx := context.Background()
	locker := memory.New(nil)

	stuck, _ := locker.Acquire(ctx, "migrations", time.Hour, nil)
	if err := locker.Break(ctx, "migrations"); err != nil {
		fmt.Println("break:", err)
		return
	}
	lease, _ := locker.Acquire(ctx, "migrations", time.Hour, nil)
	fmt.Println(lease.Token > stuck.Token)
	// Output:
	// true
}
