package sql

import (
	"errors"
	"reflect"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// backendName names this package in errors: "fence/sql: check "k": ...".
const backendName = "sql"

// opError wraps err, the outcome of op on key of a native (not portable)
// call, as every error of the package reads; nil stays nil.
func opError(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return &fence.OpError{Backend: backendName, Op: op, Key: key, Err: err}
}

// errNilTx is the cause for a nil transaction.
var errNilTx = &fence.InvalidError{Field: "tx", Reason: "nil"}

// storeMissing returns err, made to match fence.ErrStoreMissing too when
// it says that a table does not exist: PostgreSQL's undefined_table
// (42P01) and invalid_schema_name (3F000), SQLite's "no such table",
// MySQL's ER_NO_SUCH_TABLE (1146) and ER_BAD_DB_ERROR (1049).
func storeMissing(err error) error {
	if n, ok := mysqlErrno(err); ok {
		if n == erNoSuchTable || n == erBadDB {
			return driver.StoreMissing(err)
		}
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Code == "42P01" || pgErr.Code == "3F000" {
			return driver.StoreMissing(err)
		}
		return err
	}
	var code interface{ Code() int }
	if errors.As(err, &code) && code.Code()&0xff == 1 && strings.Contains(err.Error(), "no such table") {
		return driver.StoreMissing(err)
	}
	return err
}

// MySQL's error numbers that this package tells apart.
const (
	erBadDB        = 1049 // ER_BAD_DB_ERROR: unknown database
	erNoSuchTable  = 1146 // ER_NO_SUCH_TABLE
	erParse        = 1064 // ER_PARSE_ERROR: a syntax error
	erLockWait     = 1205 // ER_LOCK_WAIT_TIMEOUT
	erLockDeadlock = 1213 // ER_LOCK_DEADLOCK
	erCheckRead    = 1020 // ER_CHECKREAD: MariaDB's snapshot isolation conflict
)

// mysqlErrno returns the error number of a MySQL server error in err's
// tree: a *mysql.MySQLError of github.com/go-sql-driver/mysql, the only
// driver of the MySQL dialect. It is recognised by its type's package
// path and name and its Number read by reflection, so that this package
// does not link the driver into programs that never use it (a pgx
// program); a test pins it to the driver's type.
func mysqlErrno(err error) (n uint16, ok bool) {
	walkErrors(err, func(e error) bool {
		v := reflect.ValueOf(e)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return false
		}
		t := v.Type().Elem()
		if t.Name() != "MySQLError" || t.PkgPath() != mysqlDriverPath || t.Kind() != reflect.Struct {
			return false
		}
		f := v.Elem().FieldByName("Number")
		if f.Kind() != reflect.Uint16 {
			return false
		}
		n, ok = uint16(f.Uint()), true
		return true
	})
	return n, ok
}

// mysqlDriverPath is the import path of the MySQL driver.
const mysqlDriverPath = "github.com/go-sql-driver/mysql"

// walkErrors calls visit on err and the errors it wraps, depth first, as
// errors.As walks them, until visit returns true.
func walkErrors(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walkErrors(e, visit) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
