package mysql

import (
	"context"
	"database/sql"
	"net/url"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/mysqlurl"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	driver.RegisterLocker("mysql", urlOpener{})
}

// urlOpener opens MySQL lockers from URLs of the form of URLForm (see the
// package doc): the table parameter is fence's, every other parameter is
// go-sql-driver/mysql's. Each open makes a *sql.DB, which the opened
// locker's Close closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return mysqlurl.Form // table=T and the driver's parameters
}

// OpenLockerURL implements driver.LockerOpener. It parses the URL into
// the driver's configuration but does not connect: the first call does.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	conn, err := mysqlurl.Connector(c.cfg)
	if err != nil {
		return nil, c.Invalid(err.Error())
	}
	db := sql.OpenDB(conn)
	l, _, err := newLocker(db, &Options{Table: c.table, Clock: urlparam.Clock(opts)}, db.Close)
	if err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// urlConfig is what a URL says.
type urlConfig struct {
	*mysqlurl.Parsed
	// cfg is the driver's configuration.
	cfg *mysqldrv.Config
	// table is Options.Table.
	table string
}

// tableParam is fence's own parameter; every other one is the driver's.
const tableParam = "table"

// parseURL reads a mysql:// URL (mysqlurl.Parse, shared with the
// resources/sql/mysql opener) and its table parameter. Errors match
// fence.ErrInvalid and never show the URL's password.
func parseURL(u *url.URL) (urlConfig, error) {
	p, err := mysqlurl.Parse(u, tableParam)
	if err != nil {
		return urlConfig{}, err
	}
	c := urlConfig{Parsed: p, cfg: p.Config, table: p.Own[tableParam]}
	if _, err := parseTable(c.table); err != nil {
		return urlConfig{}, p.Invalid(tableParam + " " + err.(*fence.InvalidError).Reason)
	}
	return c, nil
}
