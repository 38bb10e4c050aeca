package mysql

import (
	"context"
	"database/sql"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
)

func init() {
	fence.RegisterLocker("mysql", &URLOpener{})
}

// URLOpener opens MySQL lockers from URLs of the form of URLForm (see the
// package doc): the table parameter is fence's, every other parameter is
// go-sql-driver/mysql's. Each open makes a *sql.DB, which the opened
// locker's Close closes.
type URLOpener struct{}

// URLForm implements fence.LockerURLOpener.
func (*URLOpener) URLForm() string {
	return "mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?table=T&DRIVER-PARAMS]"
}

// OpenLockerURL implements fence.LockerURLOpener. It parses the URL into
// the driver's configuration but does not connect: the first call does.
func (*URLOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (fence.Opened[*fence.PortableLocker], error) {
	var none fence.Opened[*fence.PortableLocker]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	conn, err := mysqldrv.NewConnector(c.cfg)
	if err != nil {
		return none, &fence.InvalidError{Field: "url", Reason: c.scrub(err.Error())}
	}
	db := sql.OpenDB(conn)
	l, err := New(db, &Options{Table: c.table, Clock: opts.ClockOrSystem()})
	if err != nil {
		db.Close()
		return none, err
	}
	return fence.Opened[*fence.PortableLocker]{Value: l.PortableLocker, Close: db.Close}, nil
}

// urlConfig is what a URL says.
type urlConfig struct {
	// cfg is the driver's configuration.
	cfg *mysqldrv.Config
	// table is Options.Table.
	table string
	// passwords are the passwords the URL carries, to keep out of every
	// error.
	passwords []string
}

// tableParam is fence's own parameter; every other one is the driver's.
const tableParam = "table"

// defaultPort is MySQL's port, used when the URL names none.
const defaultPort = "3306"

// parseURL reads a mysql:// URL. Errors match fence.ErrInvalid and never
// show the URL's password.
func parseURL(u *url.URL) (urlConfig, error) {
	c := urlConfig{passwords: fence.URLPasswords(u)}
	where := u.Scheme + "://" + u.Host + u.EscapedPath()
	invalid := func(reason string) error {
		return &fence.InvalidError{Field: "url", Reason: c.scrub(where) + ": " + reason}
	}
	if u.Opaque != "" {
		where = u.Scheme + ":"
		return urlConfig{}, invalid("want " + u.Scheme + "://[USER[:PASSWORD]@]HOST[:PORT]/DB")
	}
	if u.Fragment != "" {
		return urlConfig{}, invalid("unexpected fragment")
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return urlConfig{}, invalid("the query cannot be parsed (a bad %-escape, or ';' between parameters)")
	}
	fu := *u
	fu.RawQuery = url.Values{tableParam: query[tableParam]}.Encode()
	if len(query[tableParam]) == 0 {
		fu.RawQuery = ""
	}
	p := fence.NewURLParams(&fu)
	c.table = p.String(tableParam)
	if _, err := parseTable(c.table); err != nil {
		p.Fail("%s %s", tableParam, err.(*fence.InvalidError).Reason)
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	delete(query, tableParam)

	db := strings.TrimPrefix(u.Path, "/")
	if strings.Contains(db, "/") {
		return urlConfig{}, invalid("the path is one database name: /DB")
	}
	host := u.Hostname()
	if host == "" && u.Host != "" {
		return urlConfig{}, invalid("no host before the port")
	}
	if host == "" {
		host = "127.0.0.1"
	}
	port := u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return urlConfig{}, invalid("empty port")
		}
		port = defaultPort
	}
	cfg := mysqldrv.NewConfig()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", net.JoinHostPort(host, port), db
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	// The driver reads its parameters from a DSN; build one holding only
	// them, and take the configuration it makes, with the address, user
	// and database above.
	if len(query) > 0 {
		parsed, err := mysqldrv.ParseDSN("/?" + query.Encode())
		if err != nil {
			return urlConfig{}, invalid(c.scrub(badParam(query) + err.Error()))
		}
		parsed.Net, parsed.Addr, parsed.DBName = cfg.Net, cfg.Addr, cfg.DBName
		parsed.User, parsed.Passwd = cfg.User, cfg.Passwd
		cfg = parsed
	}
	c.cfg = cfg
	return c, nil
}

// badParam names the first parameter of query, in sorted order, that the
// driver refuses on its own: "parameter NAME: ".
func badParam(query url.Values) string {
	for _, k := range slices.Sorted(maps.Keys(query)) {
		if _, err := mysqldrv.ParseDSN("/?" + url.Values{k: query[k]}.Encode()); err != nil {
			return "parameter " + k + ": "
		}
	}
	return "driver parameters: "
}

// scrub removes the passwords from text, as given and as URLs escape them,
// and anything shaped like a URL password or a password parameter.
func (c urlConfig) scrub(text string) string { return fence.Scrub(text, c.passwords...) }
