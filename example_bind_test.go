package fence_test

import (
	"context"
	"errors"
	"fmt"

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
