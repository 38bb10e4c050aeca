package fence_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	memlock "github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// The promise fence exists for: a holder that paused past its lease wakes
// up and writes, and the resource refuses the write, because a newer
// holder has written with a higher token. A fake clock stands in for the
// pause.
func ExampleResource_Put() {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	locker := memlock.New(&memlock.Options{Clock: clock})
	reports := memres.New(nil)

	old, _ := locker.Acquire(ctx, "daily.csv", 30*time.Second, nil)
	clock.Advance(time.Minute) // a GC pause: the lease expires
	next, _ := locker.Acquire(ctx, "daily.csv", 30*time.Second, nil)
	fmt.Println(reports.Put(ctx, "daily.csv", next.Token, []byte("by the new holder")))

	err := reports.Put(ctx, "daily.csv", old.Token, []byte("by the paused holder"))
	fmt.Println("refused:", errors.Is(err, fence.ErrStaleToken))
	if stale, ok := errors.AsType[*fence.StaleTokenError](err); ok {
		fmt.Println("token", stale.Token, "highest", stale.Highest)
	}
	value, token, _ := reports.Get(ctx, "daily.csv")
	fmt.Printf("%s (token %d)\n", value, token)
	// Output:
	// <nil>
	// refused: true
	// token 1 highest 2
	// by the new holder (token 2)
}
