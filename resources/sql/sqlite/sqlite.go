// Package sqlite registers the sqlite:// URL scheme of resources/sql with
// fence.OpenResource when imported for its side effect:
//
//	import _ "github.com/fencekit/fence/resources/sql/sqlite"
//
//	r, err := fence.OpenResource(ctx, "sqlite:///var/lib/app/fence.db", nil)
//
// The URLs are
//
//	sqlite:///ABSOLUTE/PATH.db[?fence-table=T&value-table=V&busy-timeout=D]
//	sqlite://RELATIVE/PATH.db[?...]
//
// fence-table and value-table name the tables (Options.FenceTable and
// Options.ValueTable of resources/sql). The file is opened with
// modernc.org/sqlite, which this package imports (and so links into the
// program), as resources/sql advises: in WAL mode, with write
// transactions that take the lock when they begin, waiting up to
// busy-timeout (default 10s) for another writer's. The file is made when
// missing. The Resource's Create creates the tables, its Close closes the
// database, and its As gives the *sql.DB and the
// *fencesql.Fences[*sql.Tx] over it.
//
// A program that opens its SQLite database itself needs no import of
// this package: it passes the *sql.DB to fencesql.New.
package sqlite

import (
	"context"
	"database/sql"
	"net/url"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/sqlitefile"
	"github.com/fencekit/fence/internal/urlparam"
	fencesql "github.com/fencekit/fence/resources/sql"
	"github.com/fencekit/fence/resources/sql/internal/ident"
	"github.com/fencekit/fence/resources/sql/internal/opened"
)

func init() {
	driver.RegisterResource("sqlite", urlOpener{})
}

// urlOpener opens Resources on SQLite files from sqlite:// URLs.
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (urlOpener) URLForm() string {
	return "sqlite://[/]PATH.db[?fence-table=T&value-table=V&busy-timeout=D]"
}

// OpenResourceURL implements driver.ResourceOpener.
func (urlOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Resource, error) {
	dsn, opts, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, &fence.OpError{Backend: "sql", Op: "open", Err: err}
	}
	return opened.Resource(db, fencesql.SQLite, &opts)
}

// parseURL returns the modernc.org/sqlite DSN of a sqlite:// URL,
// sqlite:///abs/path (no host) or sqlite://rel/path (the host is the
// path's first part), and the tables it names. It contacts nothing.
func parseURL(u *url.URL) (dsn string, opts fencesql.Options, err error) {
	p := urlparam.New(u)
	opts.FenceTable, opts.ValueTable = ident.URLTables(p, u, false)
	dsn = sqlitefile.DSN(p, u)
	if err := p.Done(); err != nil {
		return "", fencesql.Options{}, err
	}
	return dsn, opts, nil
}
