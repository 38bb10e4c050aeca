package sql

import (
	"context"
	"database/sql"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
)

func init() {
	fence.RegisterResource("mysql", &MySQLURLOpener{})
}

// defaultMySQLPort is the port of a mysql:// URL that names none.
const defaultMySQLPort = "3306"

// MySQLURLOpener opens Resources on MySQL or MariaDB from mysql:// URLs,
//
//	mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?fence-table=T&value-table=V&DRIVER-PARAMS]
//
// through github.com/go-sql-driver/mysql over TCP (PORT defaults to 3306).
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

// URLForm implements fence.ResourceURLOpener.
func (*MySQLURLOpener) URLForm() string {
	return "mysql://[USER@]HOST[:PORT]/DB[?fence-table=T&value-table=V&DRIVER-PARAMS]"
}

// OpenResourceURL implements fence.ResourceURLOpener. It does not
// connect; the first call does.
func (*MySQLURLOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (fence.Opened[*fence.PortableResource], error) {
	var none fence.Opened[*fence.PortableResource]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	cfg, err := c.mysqlConfig()
	if err != nil {
		return none, &fence.InvalidError{Field: "url", Reason: fence.RedactURL(u.Redacted()) + ": " + c.scrub(err)}
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return none, &fence.InvalidError{Field: "url", Reason: fence.RedactURL(u.Redacted()) + ": " + c.scrub(err)}
	}
	db := sql.OpenDB(connector)
	r, err := NewResource(db, MySQL, c.tables)
	if err != nil {
		_ = db.Close()
		return none, err
	}
	return fence.Opened[*fence.PortableResource]{Value: r.PortableResource, Close: db.Close}, nil
}

// mysqlConfig returns the driver's configuration of a mysql:// URL's
// urlConfig: its DSN, which holds no password, and the password.
func (c urlConfig) mysqlConfig() (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(c.conn)
	if err != nil {
		return nil, err
	}
	cfg.Passwd = c.mysqlPassword
	return cfg, nil
}

// mysqlDSN fills c with the go-sql-driver/mysql DSN of a mysql:// URL,
// without its password, which goes to c.mysqlPassword.
func mysqlDSN(p *fence.URLParams, u *url.URL, c *urlConfig) {
	c.passwords = fence.URLPasswords(u)
	params := url.Values{}
	for _, k := range slices.Sorted(maps.Keys(u.Query())) {
		if k == fenceTableParam || k == valueTableParam {
			continue
		}
		if k == "password" {
			p.Optional(k)
			p.Fail("no password parameter; put the password in the URL (mysql://USER:PASSWORD@HOST/DB)")
			continue
		}
		if v := p.Optional(k); true {
			params.Set(k, v)
		}
	}
	db := strings.TrimPrefix(u.Path, "/")
	port := u.Port()
	switch {
	case u.Hostname() == "":
		p.Fail("no host after mysql://")
	case strings.ContainsAny(u.User.Username(), ":\x00"):
		p.Fail("a colon or NUL byte in the user name")
	case strings.HasSuffix(u.Host, ":"):
		p.Fail("an empty port")
	case db == "":
		p.Fail("no database after the host (mysql://HOST/DB)")
	case strings.Contains(db, "/"):
		p.Fail("one database after the host, not the path %q", u.Path)
	case strings.ContainsAny(db, "\x00`"):
		p.Fail("a NUL byte or backquote in the database name")
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.Fail("port %q is not a number from 1 to 65535", port)
		}
	} else {
		port = defaultMySQLPort
	}
	dsn := "/"
	if len(params) > 0 {
		dsn += "?" + params.Encode()
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		p.Fail("%s", fence.Scrub(err.Error(), c.passwords...))
		return
	}
	cfg.User = u.User.Username()
	c.mysqlPassword, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = db
	c.conn = cfg.FormatDSN()
}
