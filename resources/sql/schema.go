package sql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/pgcreate"
)

// Default table names.
const (
	DefaultFenceTable = "fence_tokens"
	DefaultValueTable = "fence_values"
)

// Tables names the tables of this package in one database. A name is a
// table ("fence_tokens") or a schema-qualified table ("app.fence_tokens");
// each part is at most MaxIdentLen bytes and is quoted, so it is used
// exactly as written (case included). Zero fields take the defaults.
type Tables struct {
	// Fence is the fence table: one row per resource key with the highest
	// token accepted. Default: DefaultFenceTable.
	Fence string
	// Value is the value table of Resource. Default: DefaultValueTable.
	Value string
}

// quoted returns the fence and value table names quoted for PostgreSQL and
// SQLite.
func (t Tables) quoted() (fenceTable, valueTable string, err error) {
	return t.quotedIn(PostgreSQL)
}

// quotedIn returns the fence and value table names quoted for d.
func (t Tables) quotedIn(d Dialect) (fenceTable, valueTable string, err error) {
	if t.Fence == "" {
		t.Fence = DefaultFenceTable
	}
	if t.Value == "" {
		t.Value = DefaultValueTable
	}
	if fenceTable, err = quoteTableIn(d, "fence table", t.Fence); err != nil {
		return "", "", err
	}
	if valueTable, err = quoteTableIn(d, "value table", t.Value); err != nil {
		return "", "", err
	}
	return fenceTable, valueTable, nil
}

// SchemaSQL returns the statements that create the tables named by t in
// dialect d (CREATE TABLE IF NOT EXISTS, one statement per string), for
// users who run their own migrations. The CHECK constraints (a positive
// token, a non-empty key) and, in SQLite, STRICT typing keep a hand-made
// corruption out; the package still reports any it meets with
// fence.ErrCorrupt.
//
// The value table is needed only by Resource; Fences and Column use only
// the fence table and the caller's own tables.
//
// In MySQL the tables are InnoDB tables keyed by VARBINARY(MaxKeyLen)
// (bytes compared exactly; 1024 bytes fit InnoDB's index limit of 3072)
// with BIGINT tokens and a LONGBLOB value; the CHECK constraints need
// MariaDB 10.2 or MySQL 8.0.16 to be enforced (older servers parse and
// ignore them).
func SchemaSQL(d Dialect, t Tables) ([]string, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	ft, vt, err := t.quotedIn(d)
	if err != nil {
		return nil, err
	}
	if d == MySQL {
		return []string{
			fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n"+
				"\t`key` VARBINARY(%d) NOT NULL PRIMARY KEY CHECK (`key` <> ''),\n"+
				"\t`token` BIGINT NOT NULL CHECK (`token` > 0)\n"+
				") ENGINE=InnoDB", ft, MaxKeyLen),
			fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n"+
				"\t`key` VARBINARY(%d) NOT NULL PRIMARY KEY CHECK (`key` <> ''),\n"+
				"\t`value` LONGBLOB NOT NULL,\n"+
				"\t`token` BIGINT NOT NULL CHECK (`token` > 0)\n"+
				") ENGINE=InnoDB", vt, MaxKeyLen),
		}, nil
	}
	if d == SQLite {
		return []string{
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	key TEXT NOT NULL PRIMARY KEY CHECK (key <> ''),
	token INTEGER NOT NULL CHECK (token > 0)
) STRICT, WITHOUT ROWID`, ft),
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	key TEXT NOT NULL PRIMARY KEY CHECK (key <> ''),
	value BLOB NOT NULL,
	token INTEGER NOT NULL CHECK (token > 0)
) STRICT, WITHOUT ROWID`, vt),
		}, nil
	}
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	key text PRIMARY KEY CHECK (key <> ''),
	token bigint NOT NULL CHECK (token > 0)
)`, ft),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	key text PRIMARY KEY CHECK (key <> ''),
	value bytea NOT NULL,
	token bigint NOT NULL CHECK (token > 0)
)`, vt),
	}, nil
}

// ColumnDefinition returns the definition of a fenced column called name
// (see Column), for PostgreSQL and SQLite alike:
//
//	"fence" bigint NOT NULL DEFAULT 0 CHECK ("fence" >= 0)
//
// for use in CREATE TABLE or ALTER TABLE ... ADD COLUMN. 0 means "never
// written under a token"; every valid token passes it.
func ColumnDefinition(name string) (string, error) {
	return ColumnDefinitionFor(PostgreSQL, name)
}

// ColumnDefinitionFor is ColumnDefinition for dialect d; in MySQL
//
//	`fence` BIGINT NOT NULL DEFAULT 0 CHECK (`fence` >= 0)
func ColumnDefinitionFor(d Dialect, name string) (string, error) {
	if err := d.validate(); err != nil {
		return "", err
	}
	q, err := quoteIdentIn(d, "fence column", name)
	if err != nil {
		return "", err
	}
	if d == MySQL {
		return q + " BIGINT NOT NULL DEFAULT 0 CHECK (" + q + " >= 0)", nil
	}
	return q + " bigint NOT NULL DEFAULT 0 CHECK (" + q + " >= 0)", nil
}

// SQLExecer is the part of *sql.DB, *sql.Conn and *sql.Tx that
// CreateTables uses.
type SQLExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// PgxExecer is the part of *pgx.Conn, *pgxpool.Pool and pgx.Tx that
// CreateTablesPgx uses.
type PgxExecer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// CreateTables runs SchemaSQL(d, t) on db. It leaves existing tables as
// they are, and replicas may run it at once: on PostgreSQL it runs the
// statements in one DO block that first takes a transaction-scoped
// advisory lock per table (pg_advisory_xact_lock), so that concurrent
// creators run one after the other (a bare CREATE TABLE IF NOT EXISTS
// racing another fails with a unique violation). In MySQL each statement
// commits on its own, even inside a transaction. Errors come in a
// *fence.OpError for operation "create".
func CreateTables(ctx context.Context, db SQLExecer, d Dialect, t Tables) error {
	if db == nil {
		return opError("create", "", &fence.InvalidError{Field: "db", Reason: "nil"})
	}
	return opError("create", "", createTables(ctx, d, t, func(ctx context.Context, stmt string) error {
		_, err := db.ExecContext(ctx, stmt)
		return err
	}))
}

// CreateTablesPgx runs SchemaSQL(PostgreSQL, t) on db, like CreateTables.
func CreateTablesPgx(ctx context.Context, db PgxExecer, t Tables) error {
	if db == nil {
		return opError("create", "", &fence.InvalidError{Field: "db", Reason: "nil"})
	}
	return opError("create", "", createTables(ctx, PostgreSQL, t, func(ctx context.Context, stmt string) error {
		_, err := db.Exec(ctx, stmt)
		return err
	}))
}

// createTables runs the statements of SchemaSQL(d, t) with exec, its
// errors unwrapped, each again after a conflict (Retryable); on
// PostgreSQL, as one statement under the tables' advisory locks (see
// internal/pgcreate).
func createTables(ctx context.Context, d Dialect, t Tables, exec func(ctx context.Context, stmt string) error) error {
	stmts, err := SchemaSQL(d, t)
	if err != nil {
		return err
	}
	if d == PostgreSQL {
		ft, vt, err := t.quotedIn(d)
		if err != nil {
			return err
		}
		stmts = []string{pgcreate.Statement([]string{ft, vt}, stmts...)}
	}
	for _, s := range stmts {
		// Every statement creates only what is missing, so a conflict
		// with a concurrent creator (SQLite answers SQLITE_BUSY to a
		// connection that opens or changes the schema while another
		// does, even with a busy timeout) runs it again, as RunTx does.
		if err := retry(ctx, func() error { return exec(ctx, s) }); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
	}
	return nil
}
