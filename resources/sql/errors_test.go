package sql_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// wantOp fails unless err is a *fence.OpError of backend "sql" for op
// and key that matches target.
func wantOp(t *testing.T, what string, err error, op, key string, target error) {
	t.Helper()
	var oe *fence.OpError
	if !errors.As(err, &oe) || oe.Backend != "sql" || oe.Op != op || oe.Key != key || !errors.Is(err, target) {
		t.Errorf("%s = %v; want a *fence.OpError of sql, %s %q, matching %v", what, err, op, key, target)
	}
}

// TestErrorsNameTheBackend: the native calls and the Resource report
// errors in one style, a *fence.OpError of backend "sql" naming the
// operation and the key, around the contract's error.
func TestErrorsNameTheBackend(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		ctx := t.Context()
		tb := b.tables(t)
		f := b.mustFences(t, tb)
		b.do(t, func(x txn) error { return x.check(f, "k", 5) })
		err := b.inTx(ctx, false, func(x txn) error { return x.check(f, "k", 4) })
		wantOp(t, "a stale Check", err, "check", "k", fence.ErrStaleToken)
		err = b.inTx(ctx, false, func(x txn) error { return x.check(f, "", 4) })
		wantOp(t, "Check of an empty key", err, "check", "", fence.ErrInvalid)
		var ie *fence.InvalidError
		if !errors.As(err, &ie) || ie.Field != "key" {
			t.Errorf("Check of an empty key = %v; want a *fence.InvalidError for field \"key\"", err)
		}

		table := accountsTable(t, b, true)
		c, err := newColumn(f, table, "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		b.do(t, func(x txn) error { return x.update(c, int64(1), 3, "") })
		err = b.inTx(ctx, false, func(x txn) error { return x.update(c, int64(1), 2, "") })
		wantOp(t, "a stale Column.Update", err, "update", table+"/1", fence.ErrStaleToken)

		r, err := b.newResource(tb)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Put(ctx, "k", 5, []byte("v")); err != nil {
			t.Fatal(err)
		}
		wantOp(t, "a stale Resource.Put", r.Put(ctx, "k", 4, nil), "put", "k", fence.ErrStaleToken)
		_, err = r.Highest(ctx, "")
		if !errors.As(err, &ie) || ie.Field != "key" {
			t.Errorf("Resource.Highest of an empty key = %v; want a *fence.InvalidError for field \"key\"", err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		f, err := fencesql.New(openSQLite(t), fencesql.SQLite, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantOp(t, "Check(nil tx)", f.Check(ctx, nil, "k", 1), "check", "k", fence.ErrInvalid)
		p, err := fencesql.NewPgx(&pgxpool.Pool{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantOp(t, "pgx: Check(nil tx)", p.Check(ctx, nil, "k", 1), "check", "k", fence.ErrInvalid)
		c, err := f.Column("accounts", "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		wantOp(t, "Column.Update(nil tx)", c.Update(ctx, nil, 7, 1, ""), "update", "accounts/7", fence.ErrInvalid)
		pc, err := p.Column("accounts", "id", "fence")
		if err != nil {
			t.Fatal(err)
		}
		wantOp(t, "pgx: Column.Update(nil tx)", pc.Update(ctx, nil, 7, 1, ""), "update", "accounts/7", fence.ErrInvalid)
	})
}

// TestMissingTables: on tables never created, the Resource and Fences
// report errors matching fence.ErrStoreMissing; Resource.Create creates
// them, and creating again changes nothing.
func TestMissingTables(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		ctx := t.Context()
		tables := []fencesql.Options{{FenceTable: uniqueName("missing_fence"), ValueTable: uniqueName("missing_value")}}
		if b.dialect != fencesql.SQLite {
			// A schema (in MySQL, a database) that does not exist either.
			tables = append(tables, fencesql.Options{FenceTable: uniqueName("noschema") + ".f", ValueTable: uniqueName("noschema") + ".v"})
		}
		for _, tb := range tables {
			r, err := b.newResource(tb)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				op  string
				err error
			}{
				{"put", r.Put(ctx, "k", 1, []byte("v"))},
				{"delete", r.Delete(ctx, "k", 1)},
				{"get", func() error { _, _, err := r.Get(ctx, "k"); return err }()},
				{"highest", func() error { _, err := r.Highest(ctx, "k"); return err }()},
			} {
				wantOp(t, c.op+" on "+tb.FenceTable, c.err, c.op, "k", fence.ErrStoreMissing)
			}
			f := b.mustFences(t, tb)
			err = b.inTx(ctx, false, func(x txn) error { return x.check(f, "k", 1) })
			wantOp(t, "Check on "+tb.FenceTable, err, "check", "k", fence.ErrStoreMissing)
			_, err = b.highest(ctx, f, "k")
			wantOp(t, "Resource.Highest on "+tb.FenceTable, err, "highest", "k", fence.ErrStoreMissing)
		}

		tb := tables[0]
		r, err := b.newResource(tb)
		if err != nil {
			t.Fatal(err)
		}
		b.dropLater(t, tb.FenceTable, tb.ValueTable)
		for range 2 {
			if err := r.Create(ctx); err != nil {
				t.Fatal(err)
			}
			if err := r.Put(ctx, "k", 1, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if v, tok, err := r.Get(ctx, "k"); err != nil || string(v) != "v" || tok != 1 {
			t.Errorf("Get after Create and Put = %q, %d, %v; want v, 1", v, tok, err)
		}
	})
}
