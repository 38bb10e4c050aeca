package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// store is the driver.Locker on a lease table: the statements of
// queries, one per call, on input the portable layer has validated. Its
// errors are bare causes; the portable fence.Locker prefixes them.
type store struct {
	db    *sql.DB
	clock fence.Clock // for the local times of HeldError and LockInfo
	table string      // quoted
	q     queries
	dia   dialectOf
	prep  *prepared
	bells *bells        // nil when the wake-ups are off
	slots chan struct{} // one per waiting connection; nil: none
	local localWaiters  // this Locker's waiters, for Publish
}

var (
	_ driver.Locker  = (*store)(nil)
	_ driver.Creator = (*store)(nil)
	_ driver.Aser    = (*store)(nil)

	_ driver.Publisher     = (*store)(nil)
	_ driver.MultiAcquirer = (*store)(nil)
)

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "mysql", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
}

// As implements driver.Aser: it gives the *sql.DB the Locker runs on to a
// **sql.DB.
func (d *store) As(target any) bool {
	if t, ok := target.(**sql.DB); ok {
		*t = d.db
		return true
	}
	return false
}

// Create implements driver.Creator: it creates the lease table if it is
// missing, and adds the value columns to one made without them (by an
// earlier version; fence.Locker.Create calls it). Replicas may run it
// at once: the server's metadata locks serialise them, and the one that
// finds the columns added meanwhile succeeds.
func (d *store) Create(ctx context.Context) error {
	if _, err := d.db.ExecContext(ctx, schemaSQL(d.table)); err != nil {
		if me, ok := errors.AsType[*mysqldrv.MySQLError](err); ok && me.Number == erBadDB {
			return fmt.Errorf("the lease table's database does not exist; create it first: fence creates tables, not databases: %w", driver.StoreMissing(err))
		}
		return fmt.Errorf("CREATE TABLE %s: %w", d.table, classify("create", err))
	}
	if _, err := d.db.ExecContext(ctx, d.q.hasValue); serverError(err) != erBadField {
		if err != nil {
			return fmt.Errorf("read the columns of %s: %w", d.table, classify("create", err))
		}
		return nil
	}
	if _, err := d.db.ExecContext(ctx, d.q.addValue); err != nil && serverError(err) != erDupField {
		return fmt.Errorf("add the value columns to %s: %w", d.table, classify("create", err))
	}
	return nil
}

// serverError returns the server's error number in err, or 0.
func serverError(err error) uint16 {
	if me, ok := errors.AsType[*mysqldrv.MySQLError](err); ok {
		return me.Number
	}
	return 0
}

// dialect returns whether the server has INSERT .. RETURNING, asking its
// VERSION() the first time.
func (d *store) dialect(ctx context.Context) (dialect, error) {
	if v := d.dia.get(); v != dialectUnknown {
		return v, nil
	}
	var version string
	if err := d.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return dialectUnknown, classify("acquire", err)
	}
	v := dialectNoReturns
	if strings.Contains(strings.ToLower(version), "mariadb") {
		v = dialectMariaDB
	}
	d.dia.set(v)
	return v, nil
}

// Server error numbers the store tells apart.
const (
	erBadDB          = 1049 // ER_BAD_DB_ERROR: unknown database
	erNoSuchTable    = 1146 // ER_NO_SUCH_TABLE
	erLockWait       = 1205 // ER_LOCK_WAIT_TIMEOUT: the statement was rolled back
	erDeadlock       = 1213 // ER_LOCK_DEADLOCK: the transaction was rolled back
	erQueryKilled    = 1317 // ER_QUERY_INTERRUPTED
	erConnKilled     = 1927 // ER_CONNECTION_KILLED (MariaDB)
	erServerShutdown = 1053 // ER_SERVER_SHUTDOWN
	erBadField       = 1054 // ER_BAD_FIELD_ERROR: unknown column
	erDupField       = 1060 // ER_DUP_FIELDNAME: the column exists
	erDupEntry       = 1062 // ER_DUP_ENTRY
)

// tries is how many times a statement undone by a deadlock or a lock wait
// timeout is sent in all.
const tries = 3

// ContentionError reports a statement that the server undid every time it
// was sent, for a deadlock (1213) or a lock wait timeout (1205): nothing
// was applied. It wraps the server's last *mysql.MySQLError.
type ContentionError struct {
	// Number is the server's error number of the last try.
	Number uint16
	// Tries is how many times the statement was sent.
	Tries int
	// Err is the last error.
	Err error
}

func (e *ContentionError) Error() string {
	return fmt.Sprintf("undone by the server %d times (deadlock or lock wait timeout), nothing applied: %v", e.Tries, e.Err)
}

// Unwrap returns the last error.
func (e *ContentionError) Unwrap() error { return e.Err }

// ConnLostError reports a connection that failed while a statement was in
// flight: the server killed it or went away, the network failed, or ctx
// ended and the store closed it. The statement may have been applied, so
// for a write (every operation but "inspect") it matches
// fence.ErrUnknownOutcome; see "Errors" in the package doc for how to
// settle it.
type ConnLostError struct {
	// Op is the operation: "acquire", "renew", "release", "break",
	// "inspect" or "create".
	Op string
	// Err is the driver's error.
	Err error
}

func (e *ConnLostError) Error() string {
	if e.Op == "inspect" {
		return fmt.Sprintf("connection lost during the statement: %v", e.Err)
	}
	return fmt.Sprintf("connection lost during the statement, which may have been applied: %v", e.Err)
}

// Unwrap returns the driver's error.
func (e *ConnLostError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, fence.ErrUnknownOutcome) true for a write.
func (e *ConnLostError) Is(target error) bool {
	return target == fence.ErrUnknownOutcome && e.Op != "inspect"
}

// classify turns a database/sql error of operation op into the error the
// store returns: missing tables, lost connections and everything else.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	if me, ok := errors.AsType[*mysqldrv.MySQLError](err); ok {
		switch me.Number {
		case erNoSuchTable, erBadDB:
			return driver.StoreMissing(err)
		case erConnKilled, erQueryKilled, erServerShutdown:
			return &ConnLostError{Op: op, Err: err}
		}
		return err
	}
	if lost(err) {
		return &ConnLostError{Op: op, Err: err}
	}
	return err
}

// lost reports whether err says the connection failed under a statement
// (not a server's answer).
func lost(err error) bool {
	var ne net.Error
	return errors.Is(err, mysqldrv.ErrInvalidConn) || errors.Is(err, sqldriver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne)
}

// retryable reports whether err is a deadlock or lock wait timeout, which
// undid the statement (each runs alone, in autocommit).
func retryable(err error) (uint16, bool) {
	if me, ok := errors.AsType[*mysqldrv.MySQLError](err); ok && (me.Number == erDeadlock || me.Number == erLockWait) {
		return me.Number, true
	}
	return 0, false
}

// retry runs call until it returns something other than a deadlock or
// lock wait timeout, at most tries times, with a short jittered pause
// between tries.
func retry(ctx context.Context, op string, call func() error) error {
	var err error
	for i := range tries {
		if err = call(); err == nil {
			return nil
		}
		n, ok := retryable(err)
		if !ok {
			return classify(op, err)
		}
		if i == tries-1 {
			return &ContentionError{Number: n, Tries: tries, Err: err}
		}
		pause := time.Duration(1+rand.IntN(4<<i)) * time.Millisecond
		select {
		case <-ctx.Done():
			return &ContentionError{Number: n, Tries: i + 1, Err: errors.Join(err, ctx.Err())}
		case <-time.After(pause):
		}
	}
	return err
}
