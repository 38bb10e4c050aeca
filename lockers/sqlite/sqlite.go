package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/notify"
)

// Limits and defaults of the SQLite locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8.
	MaxKeyLen = 1024
	// MinTTL and MaxTTL bound the lease duration. A call is a statement
	// on a local file, one disk sync for a write: a fence.Session renews
	// every TTL/3 and bounds each call by TTL/3, which leaves a write
	// about 33 ms at MinTTL.
	MinTTL = 100 * time.Millisecond
	MaxTTL = 24 * time.Hour
	// DefaultTable is the lease table used when Options.Table is empty.
	DefaultTable = "fence_locks"
	// DefaultPollInterval is how often a Locker reads the keys its waiters
	// wait for when Options.PollInterval is zero (see the package doc).
	DefaultPollInterval = 50 * time.Millisecond
)

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Table names the lease table: letters, digits and underscores, not
	// starting with a digit, at most 63 bytes. Default: DefaultTable.
	Table string
	// Clock times the leases: a lease's expiry in the table is the
	// Clock's time of the statement plus its TTL, and a key is held while
	// that expiry is after the Clock's time of the statement that reads
	// it. Every process on the file must read the same time: the host's
	// clock, fence.SystemClock (the default), or one fake clock in tests.
	Clock fence.Clock
	// PollInterval is how often the Locker reads the rows of the keys
	// that its blocked fence.Session.Lock calls wait for, to wake them
	// when another process released or broke the key. Default:
	// DefaultPollInterval.
	PollInterval time.Duration
}

// store is the driver.Locker on a lease table of an SQLite database: one
// statement per call, on input the portable layer has validated. Its
// errors are bare causes; the portable fence.Locker prefixes them.
type store struct {
	db      *sql.DB
	clock   fence.Clock
	q       queries
	created atomic.Bool // the table is known to exist
	hub     notify.Hub  // waiters of Session.Lock, woken on release and break
	poll    *poller
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.Creator         = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
	_ driver.Publisher       = (*store)(nil)
	_ driver.MultiAcquirer   = (*store)(nil)
)

// New returns a *fence.Locker that keeps its leases in the table named by
// opts (see Options) of the SQLite database db. It checks the options
// but does not touch the database: the first call creates the table if
// it is missing, and so does the Locker's Create. Open db in WAL mode
// with a busy timeout (see the package doc); the Locker does not close
// it.
func New(db *sql.DB, opts *Options) (*fence.Locker, error) {
	return newLocker(db, opts, nil)
}

// tableName is what Options.Table accepts: a name that needs no quoting
// in SQLite and no escaping anywhere it is shown.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// badTable says why t is not a table name Options.Table accepts, or ""
// when it is one.
func badTable(t string) string {
	if tableName.MatchString(t) {
		return ""
	}
	return fmt.Sprintf("%q is not letters, digits and underscores, starting with no digit, at most 63 bytes", t)
}

// newLocker is New, with closeDB for the Locker's Close (the URL
// opener's database).
func newLocker(db *sql.DB, opts *Options, closeDB func() error) (*fence.Locker, error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if why := badTable(o.Table); why != "" {
		return nil, &fence.InvalidError{Field: "table", Reason: why}
	}
	switch {
	case o.PollInterval < 0:
		return nil, &fence.InvalidError{Field: "PollInterval", Reason: fmt.Sprintf("%v is negative", o.PollInterval)}
	case o.PollInterval == 0:
		o.PollInterval = DefaultPollInterval
	}
	clock := driver.ClockOrSystem(o.Clock)
	d := &store{db: db, clock: clock, q: buildQueries(`"` + o.Table + `"`)}
	d.poll = &poller{d: d, every: o.PollInterval}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: clock, Close: closeDB})
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "sqlite", MaxKeyLen: MaxKeyLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
}

// As implements driver.Aser: it gives the database to a **sql.DB.
func (d *store) As(target any) bool {
	if t, ok := target.(**sql.DB); ok {
		*t = d.db
		return true
	}
	return false
}

// Create implements driver.Creator: it creates the lease table if it is
// missing, and adds the value columns to one made without them (by an
// earlier version). Several processes may run it at once: each succeeds.
func (d *store) Create(ctx context.Context) error {
	if err := retry(ctx, func() error {
		_, err := d.db.ExecContext(ctx, d.q.create)
		return err
	}); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	var n int
	if err := retry(ctx, func() error { return d.db.QueryRowContext(ctx, d.q.hasValue).Scan(&n) }); err != nil {
		return fmt.Errorf("read the table's columns: %w", err)
	}
	if n != 2 {
		// Checked again and added in one write transaction, which
		// serializes the processes that add them at once.
		if err := d.tx(ctx, func(conn *sql.Conn) error {
			if err := conn.QueryRowContext(ctx, d.q.hasValue).Scan(&n); err != nil || n == 2 {
				return err
			}
			if _, err := conn.ExecContext(ctx, d.q.addValue); err != nil {
				return err
			}
			_, err := conn.ExecContext(ctx, d.q.addValueToken)
			return err
		}); err != nil {
			return fmt.Errorf("add the value columns: %w", err)
		}
	}
	d.created.Store(true)
	return nil
}

// ready creates the table on the first call of the store.
func (d *store) ready(ctx context.Context) error {
	if d.created.Load() {
		return nil
	}
	return d.Create(ctx)
}

// now returns the Clock's time in Unix nanoseconds, as the table stores
// expiries.
func (d *store) now() int64 { return d.clock.Now().UnixNano() }
