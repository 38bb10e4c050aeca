package postgres

import (
	"context"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
)

func init() {
	o := &URLOpener{}
	fence.RegisterLocker("postgres", o)
	fence.RegisterLocker("postgresql", o)
}

// URLOpener opens PostgreSQL lockers from URLs of the form of URLForm
// (see the package doc): the table parameter is fence's, the rest of the
// URL is pgx's connection string. Each open makes a pgxpool.Pool, which
// the opened locker's Close closes, with the locker's listening
// connection.
type URLOpener struct{}

// URLForm implements fence.LockerURLOpener.
func (*URLOpener) URLForm() string {
	return "postgres://[USER@]HOST[:PORT]/DB[?table=T&sslmode=...]"
}

// OpenLockerURL implements fence.LockerURLOpener. It parses the connection
// string, with credentials from it or libpq's environment (PGPASSWORD,
// PGPASSFILE, ...), but does not connect: the first call does.
func (*URLOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (fence.Opened[*fence.PortableLocker], error) {
	var none fence.Opened[*fence.PortableLocker]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	cfg, err := c.poolConfig()
	if err != nil {
		return none, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return none, &fence.OpError{Backend: "postgres", Op: "open", Err: c.scrubbed(err)}
	}
	l, err := New(pool, &Options{Table: c.table, Clock: opts.ClockOrSystem()})
	if err != nil {
		pool.Close()
		return none, err
	}
	closeAll := func() error {
		l.d.ln.close()
		pool.Close()
		return nil
	}
	return fence.Opened[*fence.PortableLocker]{Value: l.PortableLocker, Close: closeAll}, nil
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

// tableParam is fence's own parameter; every other one is pgx's.
const tableParam = "table"

// parseURL reads a postgres:// or postgresql:// URL. Errors match
// fence.ErrInvalid and never show the URL's password.
func parseURL(u *url.URL) (urlConfig, error) {
	var c urlConfig
	c.passwords = fence.URLPasswords(u)
	invalid := func(shown *url.URL, reason string) error {
		return &fence.InvalidError{Field: "url", Reason: c.scrub(shown.Redacted()) + ": " + reason}
	}
	if u.Opaque != "" {
		return urlConfig{}, invalid(&url.URL{Scheme: u.Scheme}, "want "+u.Scheme+"://[USER@]HOST[:PORT]/DB")
	}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		bare := *u
		bare.RawQuery = ""
		return urlConfig{}, invalid(&bare, "the query cannot be parsed (a bad %-escape, or ';' between parameters)")
	}
	// fence reads its own parameters from a view of the URL without
	// pgx's, which it does not know.
	ours, theirs := splitQuery(u.RawQuery, tableParam)
	fu := *u
	fu.RawQuery = ours
	p := fence.NewURLParams(&fu)
	c.table = p.String(tableParam)
	if _, err := parseTable(c.table); err != nil {
		p.Fail("%s %s", tableParam, err.(*fence.InvalidError).Reason)
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	pu := *u
	pu.RawQuery, pu.ForceQuery = theirs, false
	c.connString = pu.String()
	// net/url writes a URL with no host, user or path as "postgres:";
	// pgx wants "postgres://".
	if rest, ok := strings.CutPrefix(c.connString, pu.Scheme+":"); ok && !strings.HasPrefix(rest, "//") {
		c.connString = pu.Scheme + "://" + rest
	}
	return c, nil
}

// splitQuery splits a raw query into the parts whose name is name and the
// others, each kept as written.
func splitQuery(raw, name string) (named, others string) {
	if raw == "" {
		return "", ""
	}
	var in, out []string
	for part := range strings.SplitSeq(raw, "&") {
		k, _, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err == nil && key == name {
			in = append(in, part)
		} else {
			out = append(out, part)
		}
	}
	return strings.Join(in, "&"), strings.Join(out, "&")
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
func (c urlConfig) scrub(text string) string { return fence.Scrub(text, c.passwords...) }

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
