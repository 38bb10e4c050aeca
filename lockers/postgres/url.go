package postgres

import (
	"context"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/pgurl"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	o := urlOpener{}
	driver.RegisterLocker("postgres", o)
	driver.RegisterLocker("postgresql", o)
}

// urlOpener opens PostgreSQL lockers from URLs of the form of URLForm
// (see the package doc): the table parameter is fence's, the rest of the
// URL is pgx's connection string, whose parameters must be connection
// parameters of libpq or pgx. Each open makes a pgxpool.Pool, which
// the opened locker's Close closes, with the locker's listening
// connection.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "postgres://[USER@]HOST[:PORT]/DB[?table=T&sslmode=...]"
}

// OpenLockerURL implements driver.LockerOpener. It parses the connection
// string, with credentials from it or libpq's environment (PGPASSWORD,
// PGPASSFILE, ...), but does not connect: the first call does.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	cfg, err := c.poolConfig()
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &fence.OpError{Backend: "postgres", Op: "open", Err: c.scrubbed(err)}
	}
	l, _, err := newLocker(pgxRunner{pool}, &Options{Table: c.table, Clock: urlparam.Clock(opts)}, pool.Close)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return l, nil
}

// urlConfig is what a URL says.
type urlConfig struct {
	// connString is pgx's connection string: the URL without fence's
	// parameters, otherwise as given.
	connString string
	// table is Options.Table.
	table string
	// passwords are the passwords the URL carries (in its user
	// information or password parameters), to keep out of every error.
	passwords []string
}

// tableParam is fence's own parameter; every other one must be a
// connection parameter of libpq or pgx (pgurl.IsConnParam).
const tableParam = "table"

// parseURL reads a postgres:// or postgresql:// URL. Errors match
// fence.ErrInvalid and never show the URL's password.
func parseURL(u *url.URL) (urlConfig, error) {
	var c urlConfig
	c.passwords = redact.Passwords(u)
	if u.Opaque != "" {
		shown := url.URL{Scheme: u.Scheme}
		return urlConfig{}, &fence.InvalidError{Field: "url", Reason: shown.String() + ": want " + u.Scheme + "://[USER@]HOST[:PORT]/DB"}
	}
	p := urlparam.New(u)
	c.table = p.String(tableParam)
	if _, err := parseTable(c.table); err != nil {
		p.Fail("%s %s", tableParam, err.(*fence.InvalidError).Reason)
	}
	pgurl.ReadConnParams(p, u, tableParam)
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	c.connString = pgurl.ConnString(u, tableParam)
	return c, nil
}

// poolConfig parses the connection string as pgxpool does; it reads
// libpq's environment but contacts no server. Errors match
// fence.ErrInvalid and never show the password.
func (c urlConfig) poolConfig() (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(c.connString)
	if err != nil {
		return nil, &fence.InvalidError{Field: "url", Reason: c.scrub(err.Error())}
	}
	return cfg, nil
}

// scrub removes the passwords from text, as given and as URLs escape them,
// and anything shaped like a URL password or a password parameter.
func (c urlConfig) scrub(text string) string { return redact.Scrub(text, c.passwords...) }

// scrubbed is err, printed without the password.
func (c urlConfig) scrubbed(err error) error {
	return &scrubbedError{msg: c.scrub(err.Error()), err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
