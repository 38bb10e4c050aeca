package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestOneRoundTripPerCall counts the bytes-on-the-wire round trips of each
// method on one connection, after a first call of each has let pgx
// prepare and cache the statement: one, on a pgx pool and on a *sql.DB
// with pgx's driver; two for the first Acquire of a key, which creates its
// row. lib/pq prepares every statement it sends with arguments anew, a
// round trip of its own: twice as many.
func TestOneRoundTripPerCall(t *testing.T) {
	t.Parallel()
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			want := 1
			if w.sqlDriver == "postgres" {
				want = 2
			}
			var rt roundTrips
			l := w.counted(t, newTable(t, newPool(t, 1, nil)).tableName(), &rt)
			testRoundTrips(t, l, &rt, want)
		})
	}
}

// testRoundTrips checks that each method of l takes want round trips
// on rt once its statement is prepared.
func testRoundTrips(t *testing.T, l testLocker, rt *roundTrips, want int) {
	var lease, other fence.Lease
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Acquire new key", func(ctx context.Context) (err error) {
			lease, err = l.Acquire(ctx, uniqueName("new-"), time.Minute, nil)
			return err
		}},
		{"Acquire", func(ctx context.Context) (err error) {
			lease, err = l.Acquire(ctx, "k", time.Minute, nil)
			return err
		}},
		{"Acquire held key", func(ctx context.Context) error {
			if _, err := l.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
				return err
			}
			return nil
		}},
		{"Inspect", func(ctx context.Context) error { _, err := l.Inspect(ctx, "k"); return err }},
		{"Renew", func(ctx context.Context) (err error) { lease, err = l.Renew(ctx, lease); return err }},
		{"Acquire another key", func(ctx context.Context) (err error) {
			other, err = l.Acquire(ctx, "other", time.Minute, nil)
			return err
		}},
		{"RenewBatch", func(ctx context.Context) error {
			return errors.Join(l.d.RenewBatch(ctx, []fence.Lease{lease, other})...)
		}},
		{"Release another key", func(ctx context.Context) error { return l.Release(ctx, other) }},
		{"Release", func(ctx context.Context) error { return l.Release(ctx, lease) }},
		{"Release not held", func(ctx context.Context) error {
			if err := l.Release(ctx, lease); !errors.Is(err, fence.ErrNotHeld) {
				return err
			}
			return nil
		}},
		{"Break", func(ctx context.Context) error { return l.Break(ctx, "k") }},
		{"Publish", func(ctx context.Context) error {
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err == nil {
				err = l.Publish(ctx, lease, "v")
			}
			if err == nil {
				err = l.Break(ctx, "k")
			}
			return err
		}},
		{"AcquireAll new keys", func(ctx context.Context) error {
			_, err := l.d.AcquireAll(ctx, []string{uniqueName("new-a"), uniqueName("new-b")}, []string{"o1", "o2"}, time.Minute)
			return err
		}},
		{"AcquireAll", func(ctx context.Context) error {
			_, err := l.d.AcquireAll(ctx, []string{"k", "other"}, []string{"o1", "o2"}, time.Minute)
			return err
		}},
		{"AcquireAll held keys", func(ctx context.Context) error {
			if _, err := l.d.AcquireAll(ctx, []string{"k", "other"}, []string{"o1", "o2"}, time.Minute); !errors.Is(err, fence.ErrHeld) {
				return err
			}
			return errors.Join(l.Break(ctx, "k"), l.Break(ctx, "other"))
		}},
	}
	for pass := range 2 { // pass 0 prepares the statements
		for _, c := range calls {
			before := rt.count()
			if err := c.call(t.Context()); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			w := want
			switch c.name {
			case "Acquire new key":
				w = 2 * want // the statement finds no row, a second creates it
			case "Publish":
				w = 3 * want // Acquire, Publish, Break
			case "AcquireAll held keys":
				w = 3 * want // AcquireAll, two Breaks
			}
			if n := rt.count() - before; pass == 1 && n != w {
				t.Errorf("%s took %d round trips, want %d", c.name, n, w)
			}
		}
	}
}
