// Package mysql registers the mysql:// URL scheme of resources/sql with
// fence.OpenResource when imported for its side effect:
//
//	import _ "github.com/fencekit/fence/resources/sql/mysql"
//
//	r, err := fence.OpenResource(ctx, "mysql://app@db/app", nil)
//
// The URLs are
//
//	mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?fence-table=T&value-table=V&DRIVER-PARAMS]
//
// read as lockers/mysql reads them: the same URL names the same server
// (over TCP; PORT defaults to 3306), user, password, database and driver
// settings, with the same errors. fence-table and value-table name the
// tables (Options.FenceTable and Options.ValueTable of resources/sql;
// "table" or "db.table"). Every other parameter is a
// github.com/go-sql-driver/mysql DSN parameter (tls, timeout,
// readTimeout, interpolateParams, ...; a name the driver does not know
// sets that session variable, as in its DSNs); a password parameter is
// refused, the password goes in the user information, and errors never
// show it. This package imports the driver, and so links it into the
// program. The Resource's Create creates the tables, its Close closes the
// database, and its As gives the *sql.DB and the
// *fencesql.Fences[*sql.Tx] over it.
//
// A program that opens its MySQL database itself needs no import of this
// package: it passes the *sql.DB to fencesql.New with fencesql.MySQL.
package mysql

import (
	"context"
	"database/sql"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/mysqlurl"
	"github.com/fencekit/fence/internal/urlparam"
	fencesql "github.com/fencekit/fence/resources/sql"
	"github.com/fencekit/fence/resources/sql/internal/ident"
	"github.com/fencekit/fence/resources/sql/internal/opened"
)

func init() {
	driver.RegisterResource("mysql", urlOpener{})
}

// urlOpener opens Resources on MySQL or MariaDB from mysql:// URLs.
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (urlOpener) URLForm() string {
	return mysqlurl.Form // fence-table=T, value-table=V and the driver's parameters
}

// OpenResourceURL implements driver.ResourceOpener. It does not connect;
// the first call does.
func (urlOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Resource, error) {
	parsed, opts, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	connector, err := mysqlurl.Connector(parsed.Config)
	if err != nil {
		return nil, parsed.Invalid(err.Error())
	}
	db := sql.OpenDB(connector)
	return opened.Resource(db, fencesql.MySQL, &opts)
}

// parseURL reads a mysql:// URL with mysqlurl.Parse, as lockers/mysql
// reads it, and the tables it names. It contacts nothing.
func parseURL(u *url.URL) (*mysqlurl.Parsed, fencesql.Options, error) {
	p := urlparam.New(u)
	var opts fencesql.Options
	opts.FenceTable, opts.ValueTable = ident.URLTables(p, u, true)
	// The URL's own errors as the locker's opener reports them, before
	// those of the tables.
	parsed, err := mysqlurl.Parse(u, ident.FenceTableParam, ident.ValueTableParam)
	if err != nil {
		return nil, fencesql.Options{}, err
	}
	for k := range u.Query() {
		if k != ident.FenceTableParam && k != ident.ValueTableParam {
			p.Optional(k) // the driver's: Parse checked it
		}
	}
	if err := p.Done(); err != nil {
		return nil, fencesql.Options{}, err
	}
	return parsed, opts, nil
}
