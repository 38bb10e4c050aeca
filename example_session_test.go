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

// One session per application and TTL: every lock the application takes
// goes through it, and one keepalive renews them all. Close releases what
// it still holds.
func ExampleNewSession() {
	ctx := context.Background()
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	fmt.Println("ttl:", sess.TTL())

	if _, err := sess.Lock(ctx, "reports/daily", nil); err != nil {
		panic(err)
	}
	if _, err := sess.Lock(ctx, "ledger", nil); err != nil {
		panic(err)
	}
	fmt.Println("held:", sess.Len())

	fmt.Println("close:", sess.Close(ctx))
	fmt.Println("held:", sess.Len())
	_, err = sess.Lock(ctx, "ledger", nil)
	fmt.Println(errors.Is(err, fence.ErrSessionClosed))
	// Output:
	// ttl: 10s
	// held: 2
	// close: <nil>
	// held: 0
	// true
}

// Lock tries once by default: a key another owner holds gets an error
// matching fence.ErrHeld at once, and a *fence.HeldError says until when.
func ExampleSession_Lock() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	locker := memlock.New(&memlock.Options{Clock: clock})
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: time.Minute, Clock: clock})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	h, err := sess.Lock(ctx, "nightly", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("token:", h.Token())

	_, err = sess.Lock(ctx, "nightly", nil) // another job, the same key
	fmt.Println("busy:", errors.Is(err, fence.ErrHeld))
	if held, ok := errors.AsType[*fence.HeldError](err); ok {
		fmt.Println("held until", held.ValidUntil.Format(time.TimeOnly))
	}
	// Output:
	// token: 1
	// busy: true
	// held until 02:01:00
}

// With LockOptions.Wait, Lock waits for the holder to release the key (up
// to Wait; fence.WaitForever waits until ctx ends). The next holder's
// token is higher.
func ExampleSession_Lock_wait() {
	ctx := context.Background()
	sess, err := fence.NewSession(memlock.New(nil), nil)
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	first, err := sess.Lock(ctx, "ledger", nil)
	if err != nil {
		panic(err)
	}
	go func() {
		// ... the first holder's work ...
		_ = first.Release(ctx)
	}()

	next, err := sess.Lock(ctx, "ledger", &fence.LockOptions{Wait: time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println("first:", first.Token(), "next:", next.Token())
	// Output:
	// first: 1 next: 2
}
