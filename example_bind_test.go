package fence_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	memlock "github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// Bind a resource to a lock: every write carries the lock's token, on the
// lock's key. When an operator breaks the lock and a new holder writes,
// the old holder's writes are refused.
func ExampleBind() {
	ctx := context.Background()
	locker := memlock.New(nil)
	reports := memres.New(nil)
	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	h, err := sess.Lock(ctx, "report/2026-12", nil)
	if err != nil {
		panic(err)
	}
	report, err := fence.Bind(reports, h, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("first write:", report.Put(ctx, []byte("draft")))

	// An operator breaks the lock; another replica takes it and writes.
	_ = locker.Break(ctx, "report/2026-12")
	other, _ := sess.Lock(ctx, "report/2026-12", nil)
	otherReport, _ := fence.Bind(reports, other, nil)
	_ = otherReport.Put(ctx, []byte("final"))

	err = report.Put(ctx, []byte("late draft"))
	fmt.Println("stale:", errors.Is(err, fence.ErrStaleToken))
	fmt.Println(err)

	// A name that is not under the key is refused.
	_, err = fence.Bind(reports, h, &fence.BindOptions{Name: "report/2027-01"})
	fmt.Println("invalid:", errors.Is(err, fence.ErrInvalid))
	// Output:
	// first write: <nil>
	// stale: true
	// fence/memory: put "report/2026-12": stale token 1 (highest seen 2)
	// invalid: true
}

// Take a lock through a session: try once, wait a while, or wait until
// the context ends (fence.WaitForever).
func ExampleSession_Lock() {
	ctx := context.Background()
	sess, err := fence.NewSession(memlock.New(nil), nil)
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	h, err := sess.Lock(ctx, "nightly", nil) // try once
	if err != nil {
		panic(err)
	}
	fmt.Println("token:", h.Token())

	_, err = sess.Lock(ctx, "nightly", nil)
	fmt.Println("busy:", errors.Is(err, fence.ErrHeld))

	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = h.Release(ctx)
	}()
	next, err := sess.Lock(ctx, "nightly", &fence.LockOptions{Wait: time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println("after the release:", next.Token())
	// Output:
	// token: 1
	// busy: true
	// after the release: 2
}
