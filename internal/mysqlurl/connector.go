package mysqlurl

import (
	"database/sql/driver"

	"github.com/go-sql-driver/mysql"
)

// Connector returns the driver's connector of cfg, from Parse, for an
// opener, with a logger that discards everything: the driver's default
// one writes the connections that die ("unexpected EOF", "invalid
// connection") on standard error, and fence reports a store's errors
// through the calls that met them. It sets cfg.Logger.
func Connector(cfg *mysql.Config) (driver.Connector, error) {
	cfg.Logger = &mysql.NopLogger{}
	return mysql.NewConnector(cfg)
}
