package sql_test

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testenv"
	fencesql "github.com/fencekit/fence/resources/sql"
	_ "github.com/fencekit/fence/resources/sql/mysql"  // mysql://
	_ "github.com/fencekit/fence/resources/sql/sqlite" // sqlite://
)

// TestOpenResource: fence.OpenResource opens a Resource on each URL
// scheme; before its Create its calls find the store missing, after it
// Put and Get work; As gives the database and the Fences over it; Close
// closes what the opener made.
func TestOpenResource(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"postgres", "postgresql", "sqlite", "mysql"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			tb := fencesql.Options{FenceTable: uniqueName("url_fence"), ValueTable: uniqueName("url_value")}
			params := url.Values{"fence-table": {tb.FenceTable}, "value-table": {tb.ValueTable}}
			var raw string
			switch scheme {
			case "sqlite":
				raw = "sqlite://" + (&url.URL{Path: filepath.Join(t.TempDir(), "odd #?% name.db")}).EscapedPath() + "?" + params.Encode()
			case "mysql":
				cfg := mysqlConfig(t)
				params.Set("timeout", "5s") // a driver parameter
				raw = (&url.URL{Scheme: "mysql", User: url.User(cfg.User), Host: cfg.Addr, Path: "/" + cfg.DBName, RawQuery: params.Encode()}).String()
				db := openMySQL(t, 1, nil)
				t.Cleanup(func() {
					for _, name := range []string{tb.FenceTable, tb.ValueTable} {
						_, _ = db.Exec("DROP TABLE IF EXISTS " + mysqlQuote(name))
					}
				})
			default:
				pg, err := url.Parse(testenv.PostgresURL(t))
				if err != nil {
					t.Fatal(err)
				}
				pg.Scheme = scheme
				q := pg.Query()
				for k, v := range params {
					q[k] = v
				}
				pg.RawQuery = q.Encode()
				raw = pg.String()
				db := openPgStd(t, 1)
				t.Cleanup(func() {
					for _, name := range []string{tb.FenceTable, tb.ValueTable} {
						_, _ = db.Exec(fmt.Sprintf(`DROP TABLE IF EXISTS %q`, name))
					}
				})
			}
			r, err := fence.OpenResource(ctx, raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Put(ctx, "k", 1, []byte("v")); !errors.Is(err, fence.ErrStoreMissing) {
				t.Errorf("Put before Create = %v; want ErrStoreMissing", err)
			}
			if err := r.Create(ctx); err != nil {
				t.Fatal(err)
			}
			if err := r.Put(ctx, "k", 1, []byte("v")); err != nil {
				t.Fatal(err)
			}
			if v, tok, err := r.Get(ctx, "k"); err != nil || string(v) != "v" || tok != 1 {
				t.Errorf("Get = %q, %d, %v; want v, 1", v, tok, err)
			}
			if info := driver.ResourceOf(r).ResourceInfo(); r.Name() != "sql" || info.MaxToken != fencesql.MaxToken || info.MaxKeyLen != fencesql.MaxKeyLen {
				t.Errorf("Name() = %q, info %+v; want sql, MaxToken MaxInt64, MaxKeyLen 1024", r.Name(), info)
			}
			wantAs(t, r, scheme)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, _, err := r.Get(ctx, "k"); err == nil {
				t.Errorf("Get after Close succeeded; want the closed pool or database to refuse")
			}
		})
	}
	t.Run("sqlite file", func(t *testing.T) {
		t.Parallel()
		// The file is the one the path names, under its own name.
		path := filepath.Join(t.TempDir(), "odd #?% name.db")
		r, err := fence.OpenResource(t.Context(), "sqlite://"+(&url.URL{Path: path}).EscapedPath(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Create(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("no database at %q: %v", path, err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		for _, raw := range []string{
			"postgres://app:secret@db/app?fence-table=a.b.c",
			"postgres://app:secret@db:99999/app",
			"postgres://app:secret@db/app?sslmode=nonsense",
			"postgres://app:secret@db/app?tabel=x",
			"sqlite://",
			"mysql://app:secret@db/app?fence-table=a.b.c",
			"mysql://app:secret@db/app?tls=bogus",
			"mysql://app:secret@db/app?password=secret",
		} {
			_, err := fence.OpenResource(t.Context(), raw, nil)
			if !errors.Is(err, fence.ErrInvalid) || strings.Contains(err.Error(), "secret") {
				t.Errorf("OpenResource(%q) = %v; want ErrInvalid without the password", raw, err)
			}
		}
	})
}

// wantAs checks what the As of a Resource opened from a URL of scheme
// gives: the pool (pgx) or the *sql.DB, and the Fences over it, whose
// Resource reads what r wrote.
func wantAs(t *testing.T, r *fence.Resource, scheme string) {
	t.Helper()
	var (
		pool *pgxpool.Pool
		pdb  fencesql.PgxDB
		db   *sql.DB
	)
	var back interface{ Resource() *fence.Resource }
	if scheme == "postgres" || scheme == "postgresql" {
		var f *fencesql.Fences[pgx.Tx]
		if !r.As(&pool) || pool == nil || !r.As(&pdb) || pdb != fencesql.PgxDB(pool) || r.As(&db) || !r.As(&f) || f == nil {
			t.Fatalf("As on %s: pool %v, PgxDB %v, *sql.DB %v, Fences %v; want the pool, twice, no *sql.DB, and the Fences", scheme, pool, pdb, db, f)
		}
		back = f
	} else {
		var f *fencesql.Fences[*sql.Tx]
		if !r.As(&db) || db == nil || r.As(&pool) || r.As(&pdb) || r.As(new(*fencesql.Fences[pgx.Tx])) || !r.As(&f) || f == nil {
			t.Fatalf("As on %s: *sql.DB %v, pool %v, PgxDB %v, Fences %v; want the *sql.DB and the Fences only", scheme, db, pool, pdb, f)
		}
		back = f
	}
	if r.As(new(int)) {
		t.Errorf("As(*int) on %s succeeded", scheme)
	}
	if v, tok, err := back.Resource().Get(t.Context(), "k"); err != nil || string(v) != "v" || tok != 1 {
		t.Errorf("Get through the Fences of As = %q, %d, %v; want v, 1", v, tok, err)
	}
}
