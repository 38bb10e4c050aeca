package torture_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/torture"
	"github.com/fencekit/fence/lockers/memory"
)

// refusing is the driver of a memory locker that refuses
// (fence.ErrNotHeld) every release of a lease it has renewed, as a
// locker does when handed the lease as it was acquired once that copy ran
// out.
type refusing struct {
	driver.Locker
	mu      sync.Mutex
	renewed map[fence.Token]bool
}

func (d *refusing) Renew(ctx context.Context, lease fence.Lease) error {
	err := d.Locker.Renew(ctx, lease)
	if err == nil {
		d.mu.Lock()
		d.renewed[lease.Token] = true
		d.mu.Unlock()
	}
	return err
}

func (d *refusing) Release(ctx context.Context, lease fence.Lease) error {
	d.mu.Lock()
	refuse := d.renewed[lease.Token]
	d.mu.Unlock()
	if refuse {
		return fence.ErrNotHeld
	}
	return d.Locker.Release(ctx, lease)
}

// refusingOpener opens refusing://NAME: like mem://NAME, one locker per
// name, shared by all who open it.
type refusingOpener struct {
	mu    sync.Mutex
	named map[string]*fence.Locker
}

func (o *refusingOpener) URLForm() string { return "refusing://NAME" }

func (o *refusingOpener) OpenLockerURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Locker, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.named[u.Host]
	if !ok {
		var err error
		l, err = driver.Wrap(memory.New(nil), func(d driver.Locker) driver.Locker {
			return &refusing{Locker: d, renewed: map[fence.Token]bool{}}
		})
		if err != nil {
			return nil, err
		}
		o.named[u.Host] = l
	}
	return l, nil
}

func init() {
	driver.RegisterLocker("refusing", &refusingOpener{named: map[string]*fence.Locker{}})
}

// TestRefusedReleaseFailsRun: a run whose guaranteed long job cannot be
// released after its renewals fails, and its table says so. The locker
// joins the run as any backend does, by a URL of its registered scheme.
func TestRefusedReleaseFailsRun(t *testing.T) {
	t.Parallel()
	kind := torture.LockerKind{
		Name: "refusing", TTL: 300 * time.Millisecond,
		URL: func(_ context.Context, s *torture.Stage) (string, string, error) {
			return "refusing://" + s.ID, "refusing://" + s.ID, nil
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
