package sql_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// TestSchemaKeepsCorruptionOut: the tables CreateTables makes refuse a
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
				return x.exec(fmt.Sprintf(`INSERT INTO %q (key, token) VALUES ('n', %s)`, tb.Fence, v))
			})
			if err == nil {
				t.Errorf("the fence table took token %s", v)
			}
		}
	})
}

// TestCorruptFenceRow: in a fence table made by hand without the
// constraints, a corrupted token gets ErrCorrupt from Check, QueueCheck and
// Resource, and is not written over.
func TestCorruptFenceRow(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := fencesql.Tables{Fence: uniqueName("handmade"), Value: uniqueName("value")}
		unused := uniqueName("unused")
		if err := b.createTables(t.Context(), fencesql.Tables{Fence: unused, Value: tb.Value}); err != nil {
			t.Fatal(err)
		}
		b.dropLater(t, unused)
		typ := "bigint"
		if b.dialect == fencesql.SQLite {
			typ = "" // no type: SQLite stores whatever it is given
		}
		b.exec(t, fmt.Sprintf(`CREATE TABLE %q (key text PRIMARY KEY, token %s)`, tb.Fence, typ))
		b.dropLater(t, tb.Fence, tb.Value)
		f, err := b.newFences(tb.Fence)
		if err != nil {
			t.Fatal(err)
		}
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
			b.exec(t, fmt.Sprintf(`INSERT INTO %q (key, token) VALUES ('%s', %s)`, tb.Fence, name, v))
			before := storedToken(t, b, tb.Fence, name)
			err := b.inTx(t.Context(), false, func(x txn) error { return x.check(f, name, 9) })
			if !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Check over token %s: err = %v; want ErrCorrupt", v, err)
			}
			if err := s.Put(t.Context(), name, 9, []byte("v")); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Put over token %s: err = %v; want ErrCorrupt", v, err)
			}
			if _, err := s.Highest(t.Context(), name); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Highest of token %s: err = %v; want ErrCorrupt", v, err)
			}
			if _, err := b.highest(t.Context(), f, name); !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Fences.Highest of token %s: err = %v; want ErrCorrupt", v, err)
			}
			if _, _, err := s.Get(t.Context(), name); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Get of token %s: err = %v; want ErrCorrupt", v, err)
			}
			if after := storedToken(t, b, tb.Fence, name); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("token %s became %v", v, after)
			}
		}
	})
}

// TestCorruptFenceRowInABatch: QueueCheck reports a corrupted token with
// ErrCorrupt, and the batch does not run.
func TestCorruptFenceRowInABatch(t *testing.T) {
	t.Parallel()
	conn, _, _ := connect(t)
	l := newLedger(t, conn)
	for i, v := range []string{"NULL", "0", "-4"} {
		// The ledger's fence table has the constraints; drop them here.
		if _, err := conn.Exec(t.Context(), fmt.Sprintf(`ALTER TABLE %s DROP CONSTRAINT IF EXISTS %q, ALTER COLUMN token DROP NOT NULL`,
			quoteName(l.fences.Table()), l.fences.Table()+"_token_check")); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("account/%d", 5+i)
		if _, err := conn.Exec(t.Context(), fmt.Sprintf(`INSERT INTO %s (key, token) VALUES ($1, %s)`, quoteName(l.fences.Table()), v), name); err != nil {
			t.Fatal(err)
		}
		err := l.write(t.Context(), conn, int64(5+i), 100, 9)
		if !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("token %s: err = %v; want ErrCorrupt", v, err)
		}
		if bal, n := l.balance(t, conn, int64(5+i)); bal != 0 || n != 0 {
			t.Errorf("token %s: the batch ran: balance %d, %d entries", v, bal, n)
		}
	}
}

func quoteName(s string) string { return fmt.Sprintf("%q", s) }
