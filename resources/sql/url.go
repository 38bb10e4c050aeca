package sql

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, for sqlite:// URLs

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/mysqlurl"
	"github.com/fencekit/fence/internal/pgurl"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	pg := &PostgresURLOpener{}
	driver.RegisterResource("postgres", pg)
	driver.RegisterResource("postgresql", pg)
	driver.RegisterResource("sqlite", &SQLiteURLOpener{})
}

// The URL parameters naming the tables, and their defaults.
const (
	fenceTableParam = "fence-table" // Tables.Fence
	valueTableParam = "value-table" // Tables.Value
	busyTimeout     = "busy-timeout"
	// DefaultBusyTimeout is how long an SQLite Resource opened from a URL
	// waits for another writer's lock.
	DefaultBusyTimeout = 10 * time.Second
)

// PostgresURLOpener opens Resources from postgres:// and postgresql://
// URLs: pgx connection strings that may also name the tables,
//
//	postgres://[USER[:PASSWORD]@]HOST[:PORT]/DB[?fence-table=T&value-table=V&PGX-PARAMS]
//
// fence-table and value-table are Tables.Fence and Tables.Value ("table"
// or "schema.table"; default DefaultFenceTable and DefaultValueTable).
// Every other parameter is a connection parameter of libpq or pgx, which
// goes to pgxpool.ParseConfig (sslmode, application_name, pool_max_conns,
// ...); any other name is refused with fence.ErrInvalid, and a server
// setting goes in options=-c NAME=VALUE (options=-c%20search_path%3Dapp).
// Credentials come from the URL or from the PG* environment variables and
// ~/.pgpass, as pgx reads them. The Resource
// runs on a pgxpool.Pool that its Close closes; its driver's Create
// creates the tables.
type PostgresURLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (*PostgresURLOpener) URLForm() string {
	return "postgres://[USER@]HOST[:PORT]/DB[?fence-table=T&value-table=V&PGX-PARAMS]"
}

// OpenResourceURL implements driver.ResourceOpener. It does not
// connect; the first call does.
func (*PostgresURLOpener) OpenResourceURL(ctx context.Context, u *url.URL, _ *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	var none fence.Opened[*fence.Resource]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	cfg, err := pgxpool.ParseConfig(c.conn)
	if err != nil {
		// pgx quotes the connection string in some parse errors.
		return none, &fence.InvalidError{Field: "url", Reason: redact.URL(u.Redacted()) + ": " + c.scrub(err)}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return none, opError("open", "", errors.New(c.scrub(err)))
	}
	r, err := NewPgxResource(pool, c.tables)
	if err != nil {
		pool.Close()
		return none, err
	}
	return fence.Opened[*fence.Resource]{
		Value: r.PortableResource,
		Close: func() error { pool.Close(); return nil },
	}, nil
}

// SQLiteURLOpener opens Resources on SQLite files from sqlite:// URLs,
//
//	sqlite:///ABSOLUTE/PATH.db[?fence-table=T&value-table=V&busy-timeout=D]
//	sqlite://RELATIVE/PATH.db[?...]
//
// through modernc.org/sqlite (which this package imports), in WAL mode,
// with write transactions that take the lock when they begin and wait up
// to busy-timeout (default DefaultBusyTimeout) for another writer's. The
// file is made when missing; its driver's Create creates the tables, and
// Close closes the database.
type SQLiteURLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (*SQLiteURLOpener) URLForm() string {
	return "sqlite://[/]PATH.db[?fence-table=T&value-table=V&busy-timeout=D]"
}

// OpenResourceURL implements driver.ResourceOpener.
func (*SQLiteURLOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	var none fence.Opened[*fence.Resource]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	db, err := sql.Open("sqlite", c.conn)
	if err != nil {
		return none, opError("open", "", err)
	}
	r, err := NewResource(db, SQLite, c.tables)
	if err != nil {
		_ = db.Close()
		return none, err
	}
	return fence.Opened[*fence.Resource]{Value: r.PortableResource, Close: db.Close}, nil
}

// urlConfig is what a URL says.
type urlConfig struct {
	dialect Dialect
	tables  Tables
	// conn is the pgx connection string without this package's
	// parameters, or the SQLite DSN.
	conn string
	// passwords are the URL's passwords, to scrub from pgx's errors.
	passwords []string
	// mysql is a mysql:// URL read by mysqlurl.Parse, as lockers/mysql
	// reads it: the driver's configuration, password included.
	mysql *mysqlurl.Parsed
}

// scrub returns err's text without the passwords, as given and as URLs
// escape them.
func (c urlConfig) scrub(err error) string { return redact.Scrub(err.Error(), c.passwords...) }

// parseURL reads a postgres://, postgresql://, sqlite:// or mysql:// URL.
// It contacts nothing.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{tables: Tables{Fence: tableParam(p, u, fenceTableParam), Value: tableParam(p, u, valueTableParam)}}
	if u.Fragment != "" || u.Opaque != "" {
		p.Fail("a %s URL is %s://...", u.Scheme, u.Scheme)
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		c.dialect = PostgreSQL
		c.passwords = redact.Passwords(u)
		// Every other parameter is a connection parameter of libpq or
		// pgx, whose value pgxpool.ParseConfig checks; any other is
		// refused here, before it reaches the server.
		pgurl.ReadConnParams(p, u, fenceTableParam, valueTableParam)
		c.conn = pgurl.ConnString(u, fenceTableParam, valueTableParam)
	case "sqlite":
		c.dialect = SQLite
		c.conn = sqliteDSN(p, u)
	case "mysql":
		c.dialect = MySQL
		// The URL's own errors as the locker's opener reports them,
		// before those of the tables.
		parsed, err := mysqlurl.Parse(u, fenceTableParam, valueTableParam)
		if err != nil {
			return urlConfig{}, err
		}
		c.mysql, c.passwords = parsed, parsed.Passwords
		for k := range u.Query() {
			if k != fenceTableParam && k != valueTableParam {
				p.Optional(k) // the driver's: Parse checked it
			}
		}
	default:
		p.Fail("not a postgres://, postgresql://, sqlite:// or mysql:// URL")
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// tableParam returns the table name parameter param, "" when absent,
// checked by the identifier rules of the URL's scheme.
func tableParam(p *urlparam.Params, u *url.URL, param string) string {
	v := p.String(param)
	if v == "" {
		return ""
	}
	d := PostgreSQL
	if u.Scheme == "mysql" {
		d = MySQL
	}
	if _, err := quoteTableIn(d, param, v); err != nil {
		reason := err.Error()
		if ie, ok := errors.AsType[*fence.InvalidError](err); ok {
			reason = ie.Reason
		}
		p.Fail("%s=%q: %s", param, v, reason)
	}
	return v
}

// sqlitePath escapes what SQLite's URI filenames and the driver's DSN
// parsing would read in a path.
var sqlitePath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// sqliteDSN returns the modernc.org/sqlite DSN of a sqlite:// URL:
// sqlite:///abs/path (no host) or sqlite://rel/path (the host is the
// path's first part).
func sqliteDSN(p *urlparam.Params, u *url.URL) string {
	timeout := p.Duration(busyTimeout)
	if timeout == 0 {
		timeout = DefaultBusyTimeout
	}
	path := u.Host + u.Path
	switch {
	case u.User != nil:
		p.Fail("no user or password in an SQLite URL")
	case u.Port() != "" || strings.HasSuffix(u.Host, ":"):
		p.Fail("no port in an SQLite URL; the path follows sqlite://")
	case path == "" || path == "/" || strings.HasSuffix(path, "/"):
		p.Fail("no file after sqlite:// (sqlite:///abs/path.db or sqlite://rel/path.db)")
	case strings.IndexByte(path, 0) >= 0:
		p.Fail("a NUL byte in the path")
	}
	return "file:" + sqlitePath.Replace(path) +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(" + strconv.FormatInt(timeout.Milliseconds(), 10) + ")&_txlock=immediate"
}
