package torture_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/torture"
)

// refusing is a memory locker that refuses (fence.ErrNotHeld) every
// release of a lease it has renewed, as a locker does when handed the
// lease as it was acquired once that copy ran out.
type refusing struct {
	fence.Locker
	mu      sync.Mutex
	renewed map[fence.Token]bool
}

func (l *refusing) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	next, err := l.Locker.Renew(ctx, lease)
	if err == nil {
		l.mu.Lock()
		l.renewed[lease.Token] = true
		l.mu.Unlock()
	}
	return next, err
}

func (l *refusing) Release(ctx context.Context, lease fence.Lease) error {
	l.mu.Lock()
	refuse := l.renewed[lease.Token]
	l.mu.Unlock()
	if refuse {
		return fence.ErrNotHeld
	}
	return l.Locker.Release(ctx, lease)
}

// TestRefusedReleaseFailsRun: a run whose guaranteed long job cannot be
// released after its renewals fails, and its table says so.
func TestRefusedReleaseFailsRun(t *testing.T) {
	t.Parallel()
	kind := torture.LockerKind{
		Name: "refusing", TTL: 300 * time.Millisecond,
		Open: func(context.Context, *torture.Stage) (torture.NewLocker, error) {
			l := &refusing{Locker: memory.New(nil), renewed: map[fence.Token]bool{}}
			return func(int, fence.Clock) (fence.Locker, error) { return l, nil }, nil
		},
	}
	res, err := torture.Run(t.Context(), torture.Pair{Locker: kind, Resource: torture.MemoryResource},
		torture.Config{Duration: 2 * time.Second, Workers: 2, DisruptEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := torture.WriteTable(&table, []*torture.Result{res}); err != nil {
		t.Fatal(err)
	}
	err = res.Err()
	if err == nil || !strings.Contains(err.Error(), "guaranteed long job's release was refused") {
		t.Errorf("Err() = %v; want the refused release of the guaranteed long job\n%s", err, table.String())
	}
	if !strings.Contains(table.String(), "guaranteed NOT released") || res.LeasesLost == 0 {
		t.Errorf("the table does not show the refused release as a lost lease:\n%s", table.String())
	}
}
