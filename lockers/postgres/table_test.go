package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 1, nil)
	if _, err := New(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil db): %v, want ErrInvalid", err)
	}
	for _, name := range []string{
		"a.b.c", ".t", "s.", "t\x00", "\xff", strings.Repeat("t", maxIdentLen+1),
	} {
		if _, err := New(pool, &Options{Table: name}); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New(table %q): %v, want ErrInvalid", name, err)
		}
		if _, err := SchemaSQL(name); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("SchemaSQL(%q): %v, want ErrInvalid", name, err)
		}
	}
	l, err := New(pool, nil)
	if err != nil {
		t.Fatalf("New with default options: %v", err)
	}
	if got, want := l.QuotedTable(), `"`+DefaultTable+`"`; got != want {
		t.Errorf("default table = %s, want %s", got, want)
	}
}

func TestCreateTableIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTable(t, newPool(t, 1, nil))
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := l.CreateTable(ctx); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Errorf("Release after a second CreateTable: %v (the table was replaced?)", err)
	}
}

func TestSchemaSQL(t *testing.T) {
	t.Parallel()
	got, err := SchemaSQL("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, `CREATE TABLE IF NOT EXISTS "fence_locks" (`) {
		t.Errorf("SchemaSQL(\"\") = %s", got)
	}
	got, err = SchemaSQL(`app.Lo"cks`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"app"."Lo""cks"`) {
		t.Errorf("SchemaSQL quotes %q as %s", `app.Lo"cks`, got)
	}
}

// TestOddTableNames: each part of the name is quoted as given, so odd
// characters, case and a schema all reach the server unchanged.
func TestOddTableNames(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2, nil)
	schema := uniqueName("fence_schema_")
	mustExec(t, pool, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	suffix := uniqueName("")
	for _, tt := range []struct {
		name  string
		parts pgx.Identifier
	}{
		{"upper case", pgx.Identifier{"Fence_Locks_" + suffix}},
		{"double quote", pgx.Identifier{`we"ird_` + suffix}},
		{"injection", pgx.Identifier{`x'; DROP TABLE y; --` + suffix}},
		{"spaces and unicode", pgx.Identifier{"locks für " + suffix}},
		{"schema", pgx.Identifier{schema, "Locks"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			l := newLockerOn(t, pool, strings.Join(tt.parts, "."))
			var found *string
			if err := pool.QueryRow(ctx, "SELECT to_regclass($1)::text", tt.parts.Sanitize()).Scan(&found); err != nil {
				t.Fatal(err)
			}
			if found == nil {
				t.Fatalf("no table %s after CreateTable", tt.parts.Sanitize())
			}
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if err := l.Release(ctx, lease); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}
