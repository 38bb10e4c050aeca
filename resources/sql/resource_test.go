package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
	fencesql "github.com/fencekit/fence/resources/sql"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 10, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		resourcetest.Run(t, resourcetest.Harness{
			New: func(t *testing.T) *fence.Resource {
				s, err := b.newResource(tb)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			MaxKeyLen: fencesql.MaxKeyLen,
			MaxToken:  fencesql.MaxToken,
			LostAnswer: func(t *testing.T, after func()) *fence.Resource {
				return b.lostResource(t, tb, after)
			},
		})
	})
}

func TestResourceKeepsTombstones(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		s, err := b.newResource(tb)
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
			n, err = x.scalar(fmt.Sprintf(`SELECT count(*) FROM %q`, tb.ValueTable))
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
			t.Fatalf("Get of a key never written: %v; want a NotFoundError without tombstone", err)
		}
	})
}

// TestResourceLostCommitWithCtxDone: ctx ends while the COMMIT is in flight,
// after the database applied it. The Resource honours ctx and reads nothing
// back: the outcome is unknown, matching ctx's error, never stale, whether
// or not a higher token replaced the write meanwhile; the write is there
// (or replaced) all the same.
func TestResourceLostCommitWithCtxDone(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		other, err := b.newResource(tb)
		if err != nil {
			t.Fatal(err)
		}
		for _, replaced := range []bool{false, true} {
			name := fmt.Sprintf("cancelled-replaced-%v", replaced)
			ctx, cancel := context.WithCancel(t.Context())
			s := b.lostResource(t, tb, func() {
				if replaced {
					if err := other.Put(t.Context(), name, 6, []byte("six")); err != nil {
						t.Errorf("the newer holder's Put: %v", err)
					}
				}
				cancel()
			})
			err := s.Put(ctx, name, 4, []byte("four"))
			cancel()
			var ue *fence.UnknownOutcomeError
			if !errors.As(err, &ue) || ue.Token != 4 || !errors.Is(err, context.Canceled) || errors.Is(err, fence.ErrStaleToken) {
				t.Errorf("Put cancelled while its applied COMMIT was in flight (replaced: %v): %v; want an unknown outcome matching context.Canceled", replaced, err)
			}
			want := fence.Token(4)
			if replaced {
				want = 6
			}
			if _, tok, err := other.Get(t.Context(), name); err != nil || tok != want {
				t.Errorf("after the cancelled Put (replaced: %v): token %d, %v; want %d", replaced, tok, err, want)
			}
		}
	})
}

// TestResourceAs: the Resource of a Fences gives, through As, the
// database it was made with and the Fences itself, and nothing else.
func TestResourceAs(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	f, err := fencesql.New(db, fencesql.SQLite, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Resource()
	var (
		gotDB  *sql.DB
		gotF   *fencesql.Fences[*sql.Tx]
		pool   *pgxpool.Pool
		pgxF   *fencesql.Fences[pgx.Tx]
		pgxDB  fencesql.PgxDB
		notOne *int
	)
	if !r.As(&gotDB) || gotDB != db || !r.As(&gotF) || gotF != f {
		t.Errorf("database/sql: As gave %p and %p; want %p and %p", gotDB, gotF, db, f)
	}
	if r.As(&pool) || r.As(&pgxF) || r.As(&pgxDB) || r.As(&notOne) || r.As(nil) {
		t.Error("database/sql: As gave a pgx value, or an *int, or took nil")
	}

	p := &pgxpool.Pool{} // never reached
	pf, err := fencesql.NewPgx(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr := pf.Resource()
	if !pr.As(&pool) || pool != p || !pr.As(&pgxDB) || pgxDB != fencesql.PgxDB(p) || !pr.As(&pgxF) || pgxF != pf {
		t.Errorf("pgx: As gave %p, %v and %p; want %p, %p and %p", pool, pgxDB, pgxF, p, p, pf)
	}
	gotDB, gotF = nil, nil
	if pr.As(&gotDB) || pr.As(&gotF) || gotDB != nil || gotF != nil {
		t.Error("pgx: As gave a database/sql value")
	}
}
