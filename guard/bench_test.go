package guard_test

import (
	"context"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
)

// BenchmarkRun measures the guard's own cost per job on the memory
// locker: acquire, track and stop tracking the lease, release.
func BenchmarkRun(b *testing.B) {
	for _, bc := range []struct {
		name string
		obs  *fence.Observer
	}{
		{"nil observer", nil},
		{"observer", &fence.Observer{
			AcquireAttempt: func(fence.AcquireAttemptEvent) {},
			Acquired:       func(fence.AcquiredEvent) {},
			Released:       func(fence.ReleasedEvent) {},
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			locker := memory.New(nil)
			locker.SetObserver(bc.obs)
			sess, err := fence.NewSession(locker, nil)
			if err != nil {
				b.Fatal(err)
			}
			fn := func(context.Context, *fence.Handle) error { return nil }
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := guard.Run(ctx, sess, "job", fn, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
