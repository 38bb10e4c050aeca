package guard_test

import (
	"context"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
)

// BenchmarkDo measures the guard's own cost per job on the memory locker:
// acquire, start and stop the renewer, release.
func BenchmarkDo(b *testing.B) {
	for _, bc := range []struct {
		name string
		obs  *guard.Observer
	}{
		{"nil observer", nil},
		{"observer", &guard.Observer{
			AcquireAttempt: func(guard.AcquireAttemptEvent) {},
			Acquired:       func(guard.AcquiredEvent) {},
			Released:       func(guard.ReleasedEvent) {},
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := guard.New(memory.New(nil), &guard.Options{Observer: bc.obs})
			if err != nil {
				b.Fatal(err)
			}
			fn := func(context.Context, *fence.Handle) error { return nil }
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := g.Do(ctx, "job", fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
