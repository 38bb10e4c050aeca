package sql_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	fencesql "github.com/fencekit/fence/resources/sql"
)

type creator interface{ Create(context.Context) error }

// TestOpenResource: fence.OpenResource opens a Resource on each URL
// scheme; before the driver's Create its calls find the store missing,
// after it Put and Get work; Close closes what the opener made.
func TestOpenResource(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"postgres", "postgresql", "sqlite", "mysql"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			tb := fencesql.Tables{Fence: uniqueName("url_fence"), Value: uniqueName("url_value")}
			params := url.Values{"fence-table": {tb.Fence}, "value-table": {tb.Value}}
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
					for _, name := range []string{tb.Fence, tb.Value} {
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
					for _, name := range []string{tb.Fence, tb.Value} {
						_, _ = db.Exec(fmt.Sprintf(`DROP TABLE IF EXISTS %q`, name))
					}
				})
			}
			r, err := fence.OpenResource(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Put(ctx, "k", 1, []byte("v")); !errors.Is(err, fence.ErrStoreMissing) {
				t.Errorf("Put before Create = %v; want ErrStoreMissing", err)
			}
			c, ok := r.Driver().(creator)
			if !ok {
				t.Fatalf("the driver of %s has no Create", scheme)
			}
			if err := c.Create(ctx); err != nil {
				t.Fatal(err)
			}
			if err := r.Put(ctx, "k", 1, []byte("v")); err != nil {
				t.Fatal(err)
			}
			if v, tok, err := r.Get(ctx, "k"); err != nil || string(v) != "v" || tok != 1 {
				t.Errorf("Get = %q, %d, %v; want v, 1", v, tok, err)
			}
			if info := r.Info(); info.Name != "sql" || info.MaxToken != fencesql.MaxToken {
				t.Errorf("Info() = %+v; want name sql, MaxToken MaxInt64", info)
			}
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
		r, err := fence.OpenResource(t.Context(), "sqlite://"+(&url.URL{Path: path}).EscapedPath())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Driver().(creator).Create(t.Context()); err != nil {
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
			_, err := fence.OpenResource(t.Context(), raw)
			if !errors.Is(err, fence.ErrInvalid) || strings.Contains(err.Error(), "secret") {
				t.Errorf("OpenResource(%q) = %v; want ErrInvalid without the password", raw, err)
			}
		}
	})
}
