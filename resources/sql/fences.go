package sql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// Fences fences writes in one SQL database: it checks and advances tokens
// in a fence table inside the caller's transactions (Check), runs fenced
// transactions under a lease (Run), fences rows by a token column of
// their own (Column), creates its tables (Create, SchemaSQL), and gives
// the portable fence.Resource over the same tables (Resource).
//
// Tx is the transaction type of the driver family that reaches the
// database: *sql.Tx for a Fences from New (database/sql: PostgreSQL,
// SQLite, MySQL), pgx.Tx for one from NewPgx (native pgx on
// PostgreSQL). The methods are the same for both. A Fences holds no
// connection of its own and is safe for concurrent use.
type Fences[Tx any] struct {
	dialect Dialect
	db      any // the caller's *sql.DB or PgxDB, for Resource's As
	conn    conn[Tx]
	row     *fenceRow
	tables  Options // with the defaults filled in
}

// Options are the optional settings of New and NewPgx. A nil *Options
// means every default.
type Options struct {
	// FenceTable names the fence table: one row per resource key with the
	// highest token accepted. A name is a table ("fence_tokens") or a
	// schema-qualified table ("app.fence_tokens"; in MySQL the schema is
	// the database); each part is at most 63 bytes (64 in MySQL) and is
	// quoted, so it is used exactly as written, case included. Default:
	// "fence_tokens".
	FenceTable string
	// ValueTable names the value table of Resource, as FenceTable names
	// the fence table; only Resource and Create use it. Default:
	// "fence_values".
	ValueTable string
}

// Default table names.
const (
	defaultFenceTable = "fence_tokens"
	defaultValueTable = "fence_values"
)

// withDefaults returns t with the default table names where it names
// none.
func withDefaults(t Options) Options {
	if t.FenceTable == "" {
		t.FenceTable = defaultFenceTable
	}
	if t.ValueTable == "" {
		t.ValueTable = defaultValueTable
	}
	return t
}

// PgxDB is what NewPgx needs of a PostgreSQL database reached through
// pgx: a *pgxpool.Pool, or a *pgx.Conn used by one goroutine at a time.
// (A pgx.Tx is not one: Fences begins transactions of its own.)
type PgxDB interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// New returns the Fences of db, a database/sql database of dialect d:
// PostgreSQL (through github.com/jackc/pgx/v5/stdlib), SQLite (through
// modernc.org/sqlite) or MySQL (through github.com/go-sql-driver/mysql).
// Its transactions are *sql.Tx. It checks the options but does not touch
// the database; the tables must exist (see Create and SchemaSQL).
func New(db *sql.DB, d Dialect, opts *Options) (*Fences[*sql.Tx], error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	return newFences(d, db, stdConn{db}, opts)
}

// NewPgx returns the Fences of db, a PostgreSQL database reached through
// native pgx. Its transactions are pgx.Tx, and Run sends BEGIN and the
// fence to the server in one round trip. It does not touch the database;
// the tables must exist (see Create and SchemaSQL).
func NewPgx(db PgxDB, opts *Options) (*Fences[pgx.Tx], error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	return newFences(PostgreSQL, db, pgxConn{db}, opts)
}

func newFences[Tx any](d Dialect, db any, c conn[Tx], opts *Options) (*Fences[Tx], error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	var t Options
	if opts != nil {
		t = *opts
	}
	t = withDefaults(t)
	if _, err := d.quoteTable("value table", t.ValueTable); err != nil {
		return nil, err
	}
	row, err := newFenceRow(d, t.FenceTable)
	if err != nil {
		return nil, err
	}
	return &Fences[Tx]{dialect: d, db: db, conn: c, row: row, tables: t}, nil
}

// Check admits a write carrying token on the resource key, in the
// transaction tx that does the write: if token is at least the highest
// token recorded for key, it records token and returns nil; the fence row
// stays locked until tx ends, so concurrent writers of key queue behind
// tx. Call it first in tx, before the write it protects, never in a
// transaction of its own; on any error, roll tx back.
//
// Errors come in a *fence.OpError ("fence/sql: check "k": ..."). A lower
// token gets a *fence.StaleTokenError (matching fence.ErrStaleToken)
// carrying the highest; a fence row that holds no valid token gets a
// *fence.CorruptError; an empty or over-long key, token 0 or a token
// above MaxToken a *fence.InvalidError; a missing fence table an error
// matching fence.ErrStoreMissing. A conflict that running tx again can
// resolve is Retryable.
//
// Check before the transaction reads what it will write back is the
// claim of fence.Resource.Claim: once the check holds the row, no write
// with a lower token can land before tx ends, so a read-modify-write
// cannot lose an acknowledged write to a stale holder.
func (f *Fences[Tx]) Check(ctx context.Context, tx Tx, key string, token fence.Token) error {
	if f.conn.isNil(tx) {
		return opError("check", key, errNilTx)
	}
	if err := validWrite(key, token); err != nil {
		return opError("check", key, err)
	}
	return opError("check", key, f.row.check(ctx, f.conn.wrap(tx), key, token))
}

// Create creates the fence and value tables where they are missing, with
// the statements of SchemaSQL, and leaves existing tables as they are.
// Replicas may run it at once: on PostgreSQL the statements run in one DO
// block that first takes a transaction-scoped advisory lock per table, so
// that concurrent creators run one after the other (a bare CREATE TABLE
// IF NOT EXISTS racing another fails with a unique violation), and a
// statement that meets a concurrent creator anyway runs again. In MySQL
// each CREATE TABLE commits on its own. Errors come in a *fence.OpError
// for operation "create".
func (f *Fences[Tx]) Create(ctx context.Context) error {
	return opError("create", "", f.create(ctx))
}

// create is Create, its errors unwrapped.
func (f *Fences[Tx]) create(ctx context.Context) error {
	return f.inTx(ctx, func(ctx context.Context, q querier) error {
		return createTables(ctx, f.dialect, f.tables, func(ctx context.Context, stmt string) error {
			_, err := q.exec(ctx, stmt)
			return err
		})
	})
}

// inTx runs fn in a transaction of its own at the default isolation
// level, retried on conflicts, its errors unwrapped.
func (f *Fences[Tx]) inTx(ctx context.Context, fn func(ctx context.Context, q querier) error) error {
	return f.conn.runTx(ctx, sql.LevelDefault, func(ctx context.Context, tx Tx) error {
		return fn(ctx, f.conn.wrap(tx))
	})
}

// SchemaSQL returns the statements that create f's tables (CREATE TABLE
// IF NOT EXISTS, one statement per string), for users who run their own
// migrations. The CHECK constraints (a positive token, a non-empty key)
// and, in SQLite, STRICT typing keep a hand-made corruption out; the
// package still reports any it meets with fence.ErrCorrupt. The value
// table is needed only by Resource.
//
// In MySQL the tables are InnoDB tables keyed by VARBINARY(MaxKeyLen)
// (bytes compared exactly; 1024 bytes fit InnoDB's index limit of 3072)
// with BIGINT tokens and a LONGBLOB value; the CHECK constraints need
// MariaDB 10.2 or MySQL 8.0.16 to be enforced (older servers parse and
// ignore them).
func (f *Fences[Tx]) SchemaSQL() []string {
	stmts, err := schemaSQL(f.dialect, f.tables)
	if err != nil {
		panic(err) // the names were checked by New
	}
	return stmts
}

// fenceRow holds the statements of one fence table in one dialect.
type fenceRow struct {
	dialect Dialect
	table   string // as given, for messages
	upsert  string // check-and-advance; returns the stored token, except in MySQL
	reread  string // MySQL: the locking read of the token after upsert
	readTok string // the token of a key
	raise   string // the same, raising an error unless the token passed (PostgreSQL)
}

// newFenceRow builds the statements of the fence table named table.
//
// In MySQL, check runs two statements in the caller's transaction: an
// upsert that raises the token when the caller's is not lower,
//
//	INSERT INTO t (`key`, `token`) VALUES (?, ?) ON DUPLICATE KEY UPDATE
//	`token` = IF(`token` > 0 AND `token` <= VALUES(`token`), VALUES(`token`), `token`)
//
// which locks the row, then SELECT `token` .. FOR UPDATE, which reads the
// token the upsert left: the affected-rows count cannot tell a stale token
// from the same token written again, and MySQL 8 has no RETURNING. The
// locking read sees the latest committed row under every isolation level.
func newFenceRow(d Dialect, table string) (*fenceRow, error) {
	q, err := d.quoteTable("fence table", table)
	if err != nil {
		return nil, err
	}
	if d == MySQL {
		// One assignment, so MySQL's left-to-right evaluation of
		// assignments (each sees the values set before it) cannot reorder
		// the check and the write. "`token` > 0" keeps a hand-corrupted
		// token (NULL, zero, negative) from being written over.
		return &fenceRow{
			dialect: d,
			table:   table,
			upsert: `INSERT INTO ` + q + " (`key`, `token`) VALUES (?, ?)\n" +
				"ON DUPLICATE KEY UPDATE `token` = IF(`token` > 0 AND `token` <= VALUES(`token`), VALUES(`token`), `token`)",
			reread:  `SELECT ` + "`token`" + ` FROM ` + q + " WHERE `key` = ? FOR UPDATE",
			readTok: `SELECT ` + "`token`" + ` FROM ` + q + " WHERE `key` = ?",
		}, nil
	}
	// The update always happens and keeps the higher token, so RETURNING
	// always yields the row's token after the statement: the caller's when
	// it was admitted, the (fresh, locked) higher one when it was stale,
	// and a corrupt value unchanged. "f.token > 0" keeps a hand-corrupted
	// negative token from being silently overwritten, and the CAST a
	// fraction or text in an SQLite table that is not STRICT.
	upsert := `INSERT INTO ` + q + ` AS f (key, token) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET token =
	CASE WHEN f.token > 0 AND f.token <= excluded.token AND CAST(f.token AS bigint) = f.token
	THEN excluded.token ELSE f.token END
RETURNING token`
	return &fenceRow{
		dialect: d,
		table:   table,
		upsert:  upsert,
		readTok: `SELECT token FROM ` + q + ` WHERE key = $1`,
		raise: raiseTag + `WITH up AS (` + upsert + `)
SELECT CASE WHEN up.token = $2 THEN up.token
	ELSE ('` + raiseMarker + `' || coalesce(up.token::text, 'null'))::bigint END
FROM up`,
	}, nil
}

// check is Check on valid input, its errors unwrapped.
func (f *fenceRow) check(ctx context.Context, q querier, key string, token fence.Token) error {
	var stored any
	if f.dialect == MySQL {
		// The count of affected rows is not looked at: 0 both for a
		// stale token and for the same token again.
		if _, err := q.exec(ctx, f.upsert, key, int64(token)); err != nil {
			return fmt.Errorf("fence table %s: %w", f.table, storeMissing(err))
		}
		if err := q.queryRow(ctx, f.reread, key).Scan(&stored); err != nil {
			return fmt.Errorf("fence table %s: reading the token back: %w", f.table, storeMissing(err))
		}
		return judge(key, token, stored)
	}
	if err := q.queryRow(ctx, f.upsert, key, int64(token)).Scan(&stored); err != nil {
		return fmt.Errorf("fence table %s: %w", f.table, storeMissing(err))
	}
	return judge(key, token, stored)
}

// highest returns the token recorded for key, 0 if none, its errors
// unwrapped.
func (f *fenceRow) highest(ctx context.Context, q rowQuerier, key string) (fence.Token, error) {
	var stored any
	err := q.queryRow(ctx, f.readTok, key).Scan(&stored)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("fence table %s: %w", f.table, storeMissing(err))
	}
	h, ok := asInt64(stored)
	if !ok || h <= 0 {
		return 0, &fence.CorruptError{Key: key, Reason: "stored token is " + describe(stored) + ", not a positive integer"}
	}
	return fence.Token(h), nil
}
