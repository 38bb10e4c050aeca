package backends

import (
	"context"

	mysqldrv "github.com/go-sql-driver/mysql"
	goredis "github.com/redis/go-redis/v9"
)

// SilenceClientLogs stops the backends' client libraries from logging on
// their own: go-redis, the client of the Redis and Redlock lockers and of
// the Redis resource, logs its connection pool's dial failures to
// standard error through a logger of its own, process-wide. A program that
// reports the stores' errors itself (the fence command does, once and with
// passwords scrubbed) calls it once at start. go-sql-driver/mysql, the
// client of the MySQL locker and of resources/sql's MySQL dialect, logs
// connections that die ("unexpected EOF") the same way. The other SDKs log
// nothing unless given a logger.
func SilenceClientLogs() {
	goredis.SetLogger(quietLogger{})
	_ = mysqldrv.SetLogger(&mysqldrv.NopLogger{})
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
