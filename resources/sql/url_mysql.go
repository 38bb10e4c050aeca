package sql

import (
	"context"
	"database/sql"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/mysqlurl"
)

func init() {
	driver.RegisterResource("mysql", &MySQLURLOpener{})
}

// MySQLURLOpener opens Resources on MySQL or MariaDB from mysql:// URLs,
//
//	mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?fence-table=T&value-table=V&DRIVER-PARAMS]
//
// through github.com/go-sql-driver/mysql over TCP (PORT defaults to 3306),
// read as lockers/mysql reads them: the same URL names the same server,
// user, password, database and driver settings, with the same errors.
// fence-table and value-table are Tables.Fence and Tables.Value ("table"
// or "db.table"; default DefaultFenceTable and DefaultValueTable). Every
// other parameter is a go-sql-driver/mysql DSN parameter (tls,
// timeout, readTimeout, interpolateParams, ...; a name the driver does not
// know sets that session variable, as in its DSNs); a password parameter
// is refused, the password goes in the user information. The statements
// need no parameter of their own. The Resource runs on a *sql.DB that its
// Close closes; its driver's Create creates the tables. Errors never show
// the password.
type MySQLURLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (*MySQLURLOpener) URLForm() string {
	return mysqlurl.Form // fence-table=T, value-table=V and the driver's parameters
}

// OpenResourceURL implements driver.ResourceOpener. It does not
// connect; the first call does.
func (*MySQLURLOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	var none fence.Opened[*fence.Resource]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	connector, err := mysqlurl.Connector(c.mysql.Config)
	if err != nil {
		return none, c.mysql.Invalid(err.Error())
	}
	db := sql.OpenDB(connector)
	r, err := NewResource(db, MySQL, c.tables)
	if err != nil {
		_ = db.Close()
		return none, err
	}
	return fence.Opened[*fence.Resource]{Value: r.PortableResource, Close: db.Close}, nil
}
