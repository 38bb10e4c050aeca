package fence_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	memlock "github.com/fencekit/fence/lockers/memory"
)

// The work runs in the handle's context, which ends when the lease is lost,
// with the loss as its cause. Here an operator breaks the lock, and the
// next renewal finds the lease gone; a fake clock stands in for the wait
// until that renewal.
func ExampleHandle_Context() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	locker := memlock.New(&memlock.Options{Clock: clock})
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 30 * time.Second, Clock: clock})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)
	h, err := sess.Lock(ctx, "ledger", nil)
	if err != nil {
		panic(err)
	}
	work, cancel := h.Context(ctx)
	defer cancel()

	_ = locker.Break(ctx, "ledger") // an operator frees the lock
	_ = clock.WaitTimers(ctx, 2)    // the keepalive is waiting
	clock.Advance(10 * time.Second) // the next renewal is due

	<-work.Done() // the work would select on this
	err = context.Cause(work)
	fmt.Println("lost:", errors.Is(err, fence.ErrLeaseLost))
	fmt.Println(err)
	fmt.Println("same as Err:", err == h.Err())
	// Output:
	// lost: true
	// fence: lease on "ledger" (token 1) lost: fence/memory: renew "ledger": lease not held: released or broken
	// same as Err: true
}

// Release frees the lease (compare-and-delete: never another owner's).
// The handle is done afterwards, and the next holder gets a higher token.
func ExampleHandle_Release() {
	ctx := context.Background()
	sess, err := fence.NewSession(memlock.New(nil), nil)
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	h, err := sess.Lock(ctx, "migrations", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("release:", h.Release(ctx))
	<-h.Done()
	fmt.Println("err:", h.Err())
	fmt.Println("again:", h.Release(ctx)) // the first call's result

	next, err := sess.Lock(ctx, "migrations", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("next token:", next.Token())
	// Output:
	// release: <nil>
	// err: fence: lease released
	// again: <nil>
	// next token: 2
}
