package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
	l := newTestLocker(t, pool, nil)
	if got, want := l.quotedTable(), `"`+DefaultTable+`"`; got != want {
		t.Errorf("default table = %s, want %s", got, want)
	}
}

func TestCreateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTable(t, newPool(t, 1, nil))
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := l.Create(ctx); err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Errorf("Release after a second Create: %v (the table was replaced?)", err)
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
				t.Fatalf("no table %s after Create", tt.parts.Sanitize())
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
// reaches the driver's error, through each way into the locker.
func TestStoreMissing(t *testing.T) {
	t.Parallel()
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			testStoreMissing(t, w)
		})
	}
}

func testStoreMissing(t *testing.T, w way) {
	for _, table := range []string{uniqueName("fence_none_"), uniqueName("fence_noschema_") + ".locks"} {
		l := w.locker(t, table, 1)
		ctx := t.Context()
		lease := fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
		for name, call := range map[string]func() error{
			"Acquire": func() error { _, err := l.Acquire(ctx, "k", time.Minute, nil); return err },
			"Renew":   func() error { _, err := l.Renew(ctx, lease); return err },
			"RenewBatch": func() error {
				return errors.Join(l.d.RenewBatch(ctx, []fence.Lease{lease, lease})...)
			},
			"Release": func() error { return l.Release(ctx, lease) },
			"Break":   func() error { return l.Break(ctx, "k") },
			"Inspect": func() error { _, err := l.Inspect(ctx, "k"); return err },
		} {
			err := call()
			if !errors.Is(err, fence.ErrStoreMissing) {
				t.Errorf("%s on %s: %v, want ErrStoreMissing", name, table, err)
			}
			if !reachesServerError(w, err) {
				t.Errorf("%s on %s: %v does not reach the driver's error", name, table, err)
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
	err = l.Create(ctx)
	if !errors.Is(err, fence.ErrStoreMissing) || err == nil || !strings.Contains(err.Error(), "no schema on the connection's search_path") {
		t.Errorf("Create with no schema on the search_path: %v, want ErrStoreMissing saying so", err)
	}
}

// TestLayering: New returns the portable locker over the postgres
// driver.
func TestLayering(t *testing.T) {
	t.Parallel()
	l, err := New(newPool(t, 1, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	info := driver.InfoOf(l)
	want := driver.Info{Name: "postgres", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
	if info != want {
		t.Errorf("Info = %+v, want %+v", info, want)
	}
	if l.Name() != "postgres" {
		t.Errorf("Name() = %q, want postgres", l.Name())
	}
	if under := driver.LockerOf(l); under == nil {
		t.Error("no driver under New's Locker")
	} else if _, ok := under.(*store); !ok {
		t.Errorf("the driver under New's Locker is a %T, want *store", under)
	}
	_, err = l.Acquire(t.Context(), "a\x00", time.Minute, nil)
	if !errors.Is(err, fence.ErrInvalid) || !strings.HasPrefix(err.Error(), `fence/postgres: acquire "a\x00": `) {
		t.Errorf("Acquire with a NUL in the key: %v, want ErrInvalid prefixed fence/postgres: acquire \"a\\x00\"", err)
	}
}

// TestAs: the Locker's As gives the DB it runs on, as a DB and as the
// pgx type it is, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 1, nil)
	l, err := New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	var db DB
	if !l.As(&db) || db != DB(pool) {
		t.Errorf("As(*DB) gave %v, want the pool", db)
	}
	var p *pgxpool.Pool
	if !l.As(&p) || p != pool {
		t.Errorf("As(**pgxpool.Pool) gave %p, want the pool %p", p, pool)
	}
	var c *pgx.Conn
	if l.As(&c) {
		t.Errorf("As(**pgx.Conn) on a pool gave %p", c)
	}
	var s string
	if l.As(&s) || l.As(nil) {
		t.Error("As gave a value for a *string or nil")
	}

	conn, err := pgx.Connect(t.Context(), testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	l, err = New(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !l.As(&c) || c != conn {
		t.Errorf("As(**pgx.Conn) gave %p, want the connection %p", c, conn)
	}
	if p = nil; l.As(&p) {
		t.Errorf("As(**pgxpool.Pool) on a connection gave %p", p)
	}
}
