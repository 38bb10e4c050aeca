package sql_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
	fencesql "github.com/fencekit/fence/resources/sql"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 10, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		resourcetest.Run(t, resourcetest.Harness{
			New: func(t *testing.T) fence.Resource {
				s, err := b.newStore(tb)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			MaxNameLen: fencesql.MaxNameLen,
			MaxToken:   fencesql.MaxToken,
		})
	})
}

func TestStoreKeepsTombstones(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		s, err := b.newStore(tb)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if err := s.Put(ctx, "doc", 4, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "doc", 5); err != nil {
			t.Fatal(err)
		}
		// The value row is gone, the fence row stays.
		var n any
		b.do(t, func(x txn) (err error) {
			n, err = x.scalar(fmt.Sprintf(`SELECT count(*) FROM %q`, tb.Value))
			return err
		})
		if n != int64(0) {
			t.Fatalf("%v value rows after Delete; want 0", n)
		}
		var nf *fence.NotFoundError
		if _, _, err := s.Get(ctx, "doc"); !errors.As(err, &nf) || !nf.Tombstone {
			t.Fatalf("Get after Delete: %v; want a tombstone NotFoundError", err)
		}
		wantStale(t, s.Put(ctx, "doc", 4, []byte("stale re-create")), 4, 5)
		if _, _, err := s.Get(ctx, "never"); !errors.As(err, &nf) || nf.Tombstone {
			t.Fatalf("Get of a name never written: %v; want a NotFoundError without tombstone", err)
		}
	})
}
