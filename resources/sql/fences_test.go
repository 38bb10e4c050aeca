package sql_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// wantStale fails unless err is a *fence.StaleTokenError for token with
// highest.
func wantStale(t *testing.T, err error, token, highest fence.Token) {
	t.Helper()
	var se *fence.StaleTokenError
	if !errors.As(err, &se) || !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("err = %v; want a *fence.StaleTokenError", err)
	}
	if se.Token != token || se.Highest != highest {
		t.Fatalf("stale error has token %d, highest %d; want %d, %d", se.Token, se.Highest, token, highest)
	}
}

// storedToken reads the fence row of name; nil if there is none.
func storedToken(t *testing.T, b *backend, table, name string) any {
	t.Helper()
	var v any
	b.do(t, func(x txn) error {
		var err error
		v, err = x.scalar(fmt.Sprintf(`SELECT token FROM %q WHERE key = $1`, table), name)
		if err != nil && strings.Contains(err.Error(), "no rows") {
			v, err = nil, nil
		}
		return err
	})
	return v
}

func TestCheckAdmitsEqualAndHigherRefusesLower(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 4, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		f := b.mustFences(t, tb)
		log := uniqueName("log")
		b.exec(t, fmt.Sprintf(`CREATE TABLE %q (token bigint NOT NULL)`, log))
		b.dropLater(t, log)
		name := "account/42"
		steps := []struct {
			token   fence.Token
			stale   bool
			highest fence.Token // after the step
		}{
			{5, false, 5},
			{5, false, 5}, // equal passes
			{7, false, 7}, // higher passes
			{6, true, 7},  // lower is stale
			{1, true, 7},
			{7, false, 7},
			{math.MaxInt64, false, math.MaxInt64},
			{8, true, math.MaxInt64},
		}
		admitted := 0
		for i, s := range steps {
			err := b.inTx(t.Context(), false, func(x txn) error {
				if err := x.check(f, name, s.token); err != nil {
					return err
				}
				return x.exec(fmt.Sprintf(`INSERT INTO %q (token) VALUES ($1)`, log), int64(s.token))
			})
			if s.stale {
				wantStale(t, err, s.token, s.highest)
			} else if err != nil {
				t.Fatalf("step %d: token %d: %v", i, s.token, err)
			} else {
				admitted++
			}
			if got := storedToken(t, b, tb.FenceTable, name); got != int64(s.highest) {
				t.Fatalf("step %d: fence row holds %v; want %d", i, got, s.highest)
			}
		}
		// Only the admitted transactions wrote.
		var n any
		b.do(t, func(x txn) (err error) {
			n, err = x.scalar(fmt.Sprintf(`SELECT count(*) FROM %q`, log))
			return err
		})
		if n != int64(admitted) {
			t.Fatalf("%v writes in the log; want %d", n, admitted)
		}
		// Names are independent.
		b.do(t, func(x txn) error { return x.check(f, "account/43", 1) })
	})
}

// TestHighest reads a name's high-water mark through the Resource of a
// Fences: the committed token, not that of a transaction still open (which
// sees its own Check); 0 for a name never checked; ErrInvalid for a bad
// name.
func TestHighest(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 4, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		f := b.mustFences(t, tb)
		ctx := t.Context()
		want := func(what string, got fence.Token, err error, token fence.Token) {
			t.Helper()
			if err != nil || got != token {
				t.Errorf("%s = %d, %v; want %d", what, got, err, token)
			}
		}
		h, err := b.highest(ctx, f, "account/1")
		want("Highest of a name never checked", h, err, 0)
		b.do(t, func(x txn) error { return x.check(f, "account/1", 7) })
		h, err = b.highest(ctx, f, "account/1")
		want("Highest after Check(7)", h, err, 7)
		// In a transaction that raised the token but has not committed,
		// the transaction sees its own token, the database the committed
		// one.
		errRollBack := errors.New("roll back")
		err = b.inTx(ctx, false, func(x txn) error {
			if err := x.check(f, "account/1", 9); err != nil {
				return err
			}
			v, err := x.scalar(fmt.Sprintf(`SELECT token FROM %q WHERE key = $1`, tb.FenceTable), "account/1")
			if err != nil || v != int64(9) {
				t.Errorf("the fence row in the transaction of Check(9) = %v, %v; want 9", v, err)
			}
			h, err := b.highest(ctx, f, "account/1")
			want("Highest outside the transaction of Check(9)", h, err, 7)
			return errRollBack
		})
		if !errors.Is(err, errRollBack) {
			t.Fatal(err)
		}
		h, err = b.highest(ctx, f, "account/1")
		want("Highest after the rollback", h, err, 7)
		for _, name := range []string{"", strings.Repeat("n", fencesql.MaxKeyLen+1), "bad\x00name"} {
			if _, err := b.highest(ctx, f, name); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Highest(%.20q) = %v; want ErrInvalid", name, err)
			}
		}
	})
}

func TestCheckRefusesBadInput(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		f := b.mustFences(t, tb)
		for _, tc := range []struct {
			desc  string
			name  string
			token fence.Token
		}{
			{"empty name", "", 1},
			{"token 0", "n", 0},
			{"token above bigint", "n", math.MaxInt64 + 1},
			{"max token", "n", math.MaxUint64},
			{"NUL in name", "a\x00b", 1},
			{"invalid UTF-8", "a\xff", 1},
			{"name too long", strings.Repeat("x", fencesql.MaxKeyLen+1), 1},
		} {
			err := b.inTx(t.Context(), false, func(x txn) error { return x.check(f, tc.name, tc.token) })
			if !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("%s: err = %v; want ErrInvalid", tc.desc, err)
			}
		}
		if got := storedToken(t, b, tb.FenceTable, "n"); got != nil {
			t.Errorf("a refused check wrote token %v", got)
		}
	})
}

// TestNewRefusesBadInput: New and NewPgx check their arguments and the
// table names before they touch the database.
func TestNewRefusesBadInput(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	for _, name := range []string{"a.b.c", ".x", "x.", strings.Repeat("t", fencesql.MaxIdentLen+1), "a\x00", "\xff"} {
		if _, err := fencesql.New(db, fencesql.SQLite, &fencesql.Options{FenceTable: name}); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New(fence table %q) err = %v; want ErrInvalid", name, err)
		}
		if _, err := fencesql.New(db, fencesql.PostgreSQL, &fencesql.Options{ValueTable: name}); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New(value table %q) err = %v; want ErrInvalid", name, err)
		}
		if _, err := fencesql.NewPgx(&pgxpool.Pool{}, &fencesql.Options{FenceTable: name}); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("NewPgx(fence table %q) err = %v; want ErrInvalid", name, err)
		}
	}
	for what, err := range map[string]error{
		"New(nil db)":        second(fencesql.New(nil, fencesql.SQLite, nil)),
		"New(no dialect)":    second(fencesql.New(db, 0, nil)),
		"New(dialect 4)":     second(fencesql.New(db, 4, nil)),
		"NewPgx(nil db)":     second(fencesql.NewPgx(nil, nil)),
		"New(MySQL, 65 b)":   second(fencesql.New(db, fencesql.MySQL, &fencesql.Options{FenceTable: strings.Repeat("t", fencesql.MaxMySQLIdentLen+1)})),
		"NewPgx(64 b table)": second(fencesql.NewPgx(&pgxpool.Pool{}, &fencesql.Options{ValueTable: strings.Repeat("t", fencesql.MaxMySQLIdentLen)})),
	} {
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s = %v; want ErrInvalid", what, err)
		}
	}
	if _, err := fencesql.New(db, fencesql.MySQL, &fencesql.Options{FenceTable: strings.Repeat("t", fencesql.MaxMySQLIdentLen)}); err != nil {
		t.Errorf("New(MySQL, a 64-byte table) = %v; want it accepted", err)
	}
}

// second returns the second of two results.
func second[T any](_ T, err error) error { return err }

func TestTableNamesAreQuoted(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		// A name that would be an injection if it were not quoted, and
		// one that differs from another only in case.
		odd := uniqueName("we\"i`rd; DROP TABLE x; --")
		tb := fencesql.Options{FenceTable: odd, ValueTable: strings.ToUpper(uniqueName("value"))}
		if err := b.createTables(t.Context(), tb); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if b.dialect != fencesql.SQLite {
				b.exec(t, `DROP TABLE "`+strings.ReplaceAll(odd, `"`, `""`)+`"`, `DROP TABLE "`+tb.ValueTable+`"`)
			}
		})
		s, err := b.newResource(tb)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(t.Context(), "n", 3, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if h, err := s.Highest(t.Context(), "n"); err != nil || h != 3 {
			t.Fatalf("Highest = %d, %v; want 3", h, err)
		}
	})
}
