package sql

import (
	"context"
	"errors"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/pgurl"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/urlparam"
	"github.com/fencekit/fence/resources/sql/internal/ident"
)

func init() {
	driver.RegisterResource("postgres", pgURLOpener{})
	driver.RegisterResource("postgresql", pgURLOpener{})
}

// pgURLOpener opens Resources from postgres:// and postgresql:// URLs
// (see the package doc): pgx connection strings that may also name the
// tables. The Resource runs on a pgxpool.Pool that its Close closes.
type pgURLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (pgURLOpener) URLForm() string {
	return "postgres://[USER@]HOST[:PORT]/DB[?fence-table=T&value-table=V&PGX-PARAMS]"
}

// OpenResourceURL implements driver.ResourceOpener. It does not
// connect; the first call does.
func (pgURLOpener) OpenResourceURL(ctx context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Resource, error) {
	c, err := parsePgURL(u)
	if err != nil {
		return nil, err
	}
	scrub := func(err error) string { return redact.Scrub(err.Error(), c.passwords...) }
	cfg, err := pgxpool.ParseConfig(c.conn)
	if err != nil {
		// pgx quotes the connection string in some parse errors.
		return nil, &fence.InvalidError{Field: "url", Reason: redact.URL(u.Redacted()) + ": " + scrub(err)}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, opError("open", "", errors.New(scrub(err)))
	}
	f, err := NewPgx(pool, &c.tables)
	var r *fence.Resource
	if err == nil {
		r, err = f.resource(func() error { pool.Close(); return nil })
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return r, nil
}

// pgConfig is what a postgres:// URL says.
type pgConfig struct {
	tables Options
	// conn is the pgx connection string without this package's
	// parameters.
	conn string
	// passwords are the URL's passwords, to scrub from pgx's errors.
	passwords []string
}

// parsePgURL reads a postgres:// or postgresql:// URL. It contacts
// nothing.
func parsePgURL(u *url.URL) (pgConfig, error) {
	p := urlparam.New(u)
	var c pgConfig
	c.tables.FenceTable, c.tables.ValueTable = ident.URLTables(p, u, false)
	c.passwords = redact.Passwords(u)
	// Every other parameter is a connection parameter of libpq or pgx,
	// whose value pgxpool.ParseConfig checks; any other is refused here,
	// before it reaches the server.
	pgurl.ReadConnParams(p, u, ident.FenceTableParam, ident.ValueTableParam)
	c.conn = pgurl.ConnString(u, ident.FenceTableParam, ident.ValueTableParam)
	if err := p.Done(); err != nil {
		return pgConfig{}, err
	}
	return c, nil
}
