package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/pgcreate"
)

// store is the driver.Locker on a lease table: the statements of
// queries, one per call, on input the portable layer has validated. Its
// errors are bare causes; the portable fence.Locker prefixes them.
type store struct {
	db    runner
	clock fence.Clock // for the local times of HeldError and LockInfo
	table pgx.Identifier
	q     queries
	ln    *listener // release notifications
}

var (
	_ driver.Locker  = (*store)(nil)
	_ driver.Creator = (*store)(nil)
	_ driver.Aser    = (*store)(nil)
)

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "postgres", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
}

// As implements driver.Aser: it gives the DB the Locker runs on to a *DB,
// and the same value to a **pgxpool.Pool or a **pgx.Conn when it is one;
// it gives the *sql.DB of NewSQL to a **sql.DB.
func (d *store) As(target any) bool {
	var db DB
	if r, ok := d.db.(pgxRunner); ok {
		db = r.db
	}
	switch t := target.(type) {
	case *DB:
		if db != nil {
			*t = db
		}
		return db != nil
	case **pgxpool.Pool:
		p, ok := db.(*pgxpool.Pool)
		if ok {
			*t = p
		}
		return ok
	case **pgx.Conn:
		c, ok := db.(*pgx.Conn)
		if ok {
			*t = c
		}
		return ok
	case **sql.DB:
		r, ok := d.db.(sqlRunner)
		if ok {
			*t = r.db
		}
		return ok
	}
	return false
}

// Create implements driver.Creator: it creates the lease table if it is
// missing, or adds the value columns to one made without them
// (fence.Locker.Create calls it), under the table's advisory lock (see internal/pgcreate), so
// that replicas creating it at once all succeed. A missing schema gets an
// error that says to create it.
func (d *store) Create(ctx context.Context) error {
	table := d.table.Sanitize()
	_, err := d.db.exec(ctx, pgcreate.Statement([]string{table}, schemaSQL(table), addValueSQL(table)))
	if sqlState(err) == codeUndefinedSchema {
		if len(d.table) == 2 {
			schema := pgx.Identifier{d.table[0]}.Sanitize()
			return fmt.Errorf("schema %s does not exist; create it first (CREATE SCHEMA %s): fence creates tables, not schemas: %w",
				schema, schema, driver.StoreMissing(err))
		}
		return fmt.Errorf("no schema on the connection's search_path exists to hold the lease table; create one, or name the table's schema (table=SCHEMA.TABLE): fence creates tables, not schemas: %w",
			driver.StoreMissing(err))
	}
	if err != nil {
		return fmt.Errorf("CREATE TABLE %s: %w", d.table.Sanitize(), err)
	}
	return nil
}

// storeErr returns err, an error of the driver, marked with
// fence.StoreMissing when it says that the table or its schema does not
// exist.
func storeErr(err error) error {
	if s := sqlState(err); s == codeUndefinedTable || s == codeUndefinedSchema {
		return driver.StoreMissing(err)
	}
	return err
}
