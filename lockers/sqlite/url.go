package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/sqlitefile"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("sqlite", urlOpener{}) }

// urlOpener opens SQLite lockers from sqlite:// URLs (see the package
// doc). Each open makes a *sql.DB, which the opened locker's Close
// closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string { return "sqlite://[/]PATH.db[?table=T&busy-timeout=D]" }

// OpenLockerURL implements driver.LockerOpener. It opens the file,
// making it when missing, and creates the lease table in it when
// missing.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	p := urlparam.New(u)
	table := p.String("table")
	if why := badTable(table); table != "" && why != "" {
		p.Fail("table=%s", why)
	}
	if u.Fragment != "" || u.Opaque != "" {
		p.Fail("an SQLite URL is sqlite:///abs/path.db or sqlite://rel/path.db")
	}
	dsn := sqlitefile.DSN(p, u)
	if err := p.Done(); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, &fence.OpError{Backend: "sqlite", Op: "open", Err: err}
	}
	l, err := newLocker(db, &Options{Table: table, Clock: urlparam.Clock(opts)}, db.Close)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := driver.LockerOf(l).(driver.Creator).Create(ctx); err != nil {
		_ = db.Close()
		return nil, &fence.OpError{Backend: "sqlite", Op: "open", Err: fmt.Errorf("%s: %w", u.Host+u.Path, err)}
	}
	return l, nil
}
