package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testenv"
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

// TestStoreMissing: every call on a table that does not exist, or in a
// schema that does not exist, matches fence.ErrStoreMissing and still
// reaches pgx's error.
func TestStoreMissing(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 1, nil)
	for _, table := range []string{uniqueName("fence_none_"), uniqueName("fence_noschema_") + ".locks"} {
		l, err := New(pool, &Options{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		lease := fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
		for name, call := range map[string]func() error{
			"Acquire": func() error { _, err := l.Acquire(ctx, "k", time.Minute, nil); return err },
			"Renew":   func() error { _, err := l.Renew(ctx, lease); return err },
			"RenewMany": func() error {
				_, errs := l.RenewMany(ctx, []fence.Lease{lease, lease})
				return errors.Join(errs...)
			},
			"Release": func() error { return l.Release(ctx, lease) },
			"Break":   func() error { return l.Break(ctx, "k") },
			"Inspect": func() error { _, err := l.Inspect(ctx, "k"); return err },
		} {
			err := call()
			if !errors.Is(err, fence.ErrStoreMissing) {
				t.Errorf("%s on %s: %v, want ErrStoreMissing", name, table, err)
			}
			if _, ok := errors.AsType[*pgconn.PgError](err); !ok {
				t.Errorf("%s on %s: %v does not reach the *pgconn.PgError", name, table, err)
			}
		}
	}
}

// TestCreateMissingSchema: Create makes tables, not schemas, and says so.
func TestCreateMissingSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 1, nil)
	schema := uniqueName("fence_noschema_")
	l, err := New(pool, &Options{Table: schema + ".locks"})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Create(ctx)
	if !errors.Is(err, fence.ErrStoreMissing) {
		t.Errorf("Create in a missing schema: %v, want ErrStoreMissing", err)
	}
	for _, want := range []string{
		`fence/postgres: create: schema "` + schema + `" does not exist; create it first (CREATE SCHEMA "` + schema + `")`,
		"fence creates tables, not schemas",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Create in a missing schema: %v, want it to say %q", err, want)
		}
	}

	// No schema on the search_path: the table's name has no schema to
	// create.
	cfg, err := pgxpool.ParseConfig(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	nowhere, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nowhere.Close)
	l, err = New(nowhere, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = l.CreateTable(ctx)
	if !errors.Is(err, fence.ErrStoreMissing) || err == nil || !strings.Contains(err.Error(), "no schema on the connection's search_path") {
		t.Errorf("Create with no schema on the search_path: %v, want ErrStoreMissing saying so", err)
	}
}

// TestLayering: a Locker is the portable locker over the postgres driver.
func TestLayering(t *testing.T) {
	t.Parallel()
	l, err := New(newPool(t, 1, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	info := l.Info()
	want := driver.Info{Name: "postgres", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
	if info != want {
		t.Errorf("Info = %+v, want %+v", info, want)
	}
	if _, ok := l.Driver().(*store); !ok {
		t.Errorf("Driver() = %T, want *driver", l.Driver())
	}
	_, err = l.Acquire(t.Context(), "a\x00", time.Minute, nil)
	if !errors.Is(err, fence.ErrInvalid) || !strings.HasPrefix(err.Error(), `fence/postgres: acquire "a\x00": `) {
		t.Errorf("Acquire with a NUL in the key: %v, want ErrInvalid prefixed fence/postgres: acquire \"a\\x00\"", err)
	}
}
