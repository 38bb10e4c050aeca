package sql_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	memlock "github.com/fencekit/fence/lockers/memory"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// TestSchemaKeepsCorruptionOut: the tables Create makes refuse a
// token that is NULL, zero, negative or (SQLite) not an integer.
func TestSchemaKeepsCorruptionOut(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		values := []string{"NULL", "0", "-1"}
		if b.dialect == fencesql.SQLite {
			values = append(values, "'abc'", "1.5", "x'07'")
		}
		for _, v := range values {
			err := b.inTx(t.Context(), false, func(x txn) error {
				return x.exec(fmt.Sprintf(`INSERT INTO %q (key, token) VALUES ('n', %s)`, tb.FenceTable, v))
			})
			if err == nil {
				t.Errorf("the fence table took token %s", v)
			}
		}
	})
}

// TestCorruptFenceRow: in a fence table made by hand without the
// constraints, a corrupted token gets ErrCorrupt from Check and Resource
// (Run's fence on pgx: TestCorruptFenceRowInRun), and is not written
// over.
func TestCorruptFenceRow(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := fencesql.Options{FenceTable: uniqueName("handmade"), ValueTable: uniqueName("value")}
		unused := uniqueName("unused")
		if err := b.createTables(t.Context(), fencesql.Options{FenceTable: unused, ValueTable: tb.ValueTable}); err != nil {
			t.Fatal(err)
		}
		b.dropLater(t, unused)
		typ := "bigint"
		if b.dialect == fencesql.SQLite {
			typ = "" // no type: SQLite stores whatever it is given
		}
		b.exec(t, fmt.Sprintf(`CREATE TABLE %q (key text PRIMARY KEY, token %s)`, tb.FenceTable, typ))
		b.dropLater(t, tb.FenceTable, tb.ValueTable)
		f := b.mustFences(t, tb)
		s, err := b.newResource(tb)
		if err != nil {
			t.Fatal(err)
		}
		values := []string{"NULL", "0", "-4"}
		if b.dialect == fencesql.SQLite {
			values = append(values, "'7'", "'abc'", "2.5", "x'07'")
		}
		for i, v := range values {
			name := fmt.Sprintf("corrupt-%d", i)
			b.exec(t, fmt.Sprintf(`INSERT INTO %q (key, token) VALUES ('%s', %s)`, tb.FenceTable, name, v))
			before := storedToken(t, b, tb.FenceTable, name)
			err := b.inTx(t.Context(), false, func(x txn) error { return x.check(f, name, 9) })
			if !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Check over token %s: err = %v; want ErrCorrupt", v, err)
			}
			if err := s.Put(t.Context(), name, 9, []byte("v")); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Put over token %s: err = %v; want ErrCorrupt", v, err)
			}
			if _, err := s.Highest(t.Context(), name); !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Highest of token %s: err = %v; want ErrCorrupt", v, err)
			}
			if _, _, err := s.Get(t.Context(), name); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Get of token %s: err = %v; want ErrCorrupt", v, err)
			}
			if after := storedToken(t, b, tb.FenceTable, name); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("token %s became %v", v, after)
			}
		}
	})
}

// TestCorruptFenceRowInRun: on pgx, the fence that Run sends with BEGIN
// reports a corrupted token with ErrCorrupt, and fn does not run.
func TestCorruptFenceRowInRun(t *testing.T) {
	t.Parallel()
	conn, _, _ := connect(t)
	l := newLedger(t, conn)
	ctx := t.Context()
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	for i, v := range []string{"NULL", "0", "-4"} {
		// The ledger's fence table has the constraints; drop them here.
		if _, err := conn.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s DROP CONSTRAINT IF EXISTS %q, ALTER COLUMN token DROP NOT NULL`,
			quoteName(l.fenceTable), l.fenceTable+"_token_check")); err != nil {
			t.Fatal(err)
		}
		account := int64(5 + i)
		name := fmt.Sprintf("account/%d", account)
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (key, token) VALUES ($1, %s)`, quoteName(l.fenceTable), v), name); err != nil {
			t.Fatal(err)
		}
		h, err := sess.Lock(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		err = l.fences.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
			ran = true
			return l.write(ctx, tx, account, 100)
		}, nil)
		_ = h.Release(ctx)
		if !errors.Is(err, fence.ErrCorrupt) || ran {
			t.Errorf("token %s: err = %v, fn ran: %v; want ErrCorrupt and fn not run", v, err, ran)
		}
		if bal, n := l.balance(t, conn, account); bal != 0 || n != 0 {
			t.Errorf("token %s: the transaction wrote: balance %d, %d entries", v, bal, n)
		}
	}
}

func quoteName(s string) string { return fmt.Sprintf("%q", s) }
