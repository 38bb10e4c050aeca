package sql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Fences checks and advances tokens in a fence table (fence-row mode),
// inside the caller's transaction. Create it with NewFences; it is safe for
// concurrent use and holds no connection.
type Fences struct {
	dialect Dialect
	table   string // as given, for messages
	quoted  string // quoted, for statements
	upsert  string // check-and-advance; returns the stored token, except in MySQL
	reread  string // MySQL: the locking read of the token after upsert
	readTok string // the token of a key
	raise   string // the same, raising an error unless the token passed
}

// NewFences returns the fence-row checker for the fence table named table
// (see Tables.Fence; "" means DefaultFenceTable) in a PostgreSQL or SQLite
// database. The table must exist: see SchemaSQL and CreateTables.
func NewFences(table string) (*Fences, error) {
	return NewFencesFor(PostgreSQL, table)
}

// NewFencesFor returns the fence-row checker for the fence table named
// table in a database of dialect d. NewFences(table) is
// NewFencesFor(PostgreSQL, table), which SQLite shares. A MySQL Fences
// has only the database/sql calls (Check, Highest, Run, Locked); its pgx
// calls return an error matching fence.ErrInvalid.
//
// In MySQL, Check runs two statements in the caller's transaction: an
// upsert that raises the token when the caller's is not lower,
//
//	INSERT INTO t (`key`, `token`) VALUES (?, ?) ON DUPLICATE KEY UPDATE
//	`token` = IF(`token` > 0 AND `token` <= VALUES(`token`), VALUES(`token`), `token`)
//
// which locks the row, then SELECT `token` .. FOR UPDATE, which reads the
// token the upsert left: the affected-rows count cannot tell a stale token
// from the same token written again, and MySQL 8 has no RETURNING. The
// locking read sees the latest committed row under every isolation level.
func NewFencesFor(d Dialect, table string) (*Fences, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	if table == "" {
		table = DefaultFenceTable
	}
	q, err := quoteTableIn(d, "fence table", table)
	if err != nil {
		return nil, err
	}
	if d == MySQL {
		// One assignment, so MySQL's left-to-right evaluation of
		// assignments (each sees the values set before it) cannot reorder
		// the check and the write. "`token` > 0" keeps a hand-corrupted
		// token (NULL, zero, negative) from being written over.
		return &Fences{
			dialect: d,
			table:   table,
			quoted:  q,
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
	return &Fences{
		dialect: d,
		table:   table,
		quoted:  q,
		upsert:  upsert,
		readTok: `SELECT token FROM ` + q + ` WHERE key = $1`,
		raise: raiseTag + `WITH up AS (` + upsert + `)
SELECT CASE WHEN up.token = $2 THEN up.token
	ELSE ('` + raiseMarker + `' || coalesce(up.token::text, 'null'))::bigint END
FROM up`,
	}, nil
}

// Table returns the fence table's name as given to NewFences.
func (f *Fences) Table() string { return f.table }

// Dialect returns the dialect of f's statements.
func (f *Fences) Dialect() Dialect { return f.dialect }

// noPgx returns the error of a pgx call of a MySQL Fences, nil otherwise.
func (f *Fences) noPgx(op, key string) error {
	if f != nil && f.dialect == MySQL {
		return opError(op, key, &fence.InvalidError{Field: "fences", Reason: "a MySQL Fences has no pgx calls"})
	}
	return nil
}

// Check admits a write carrying token on the resource key, in the
// database/sql transaction tx that does the write, in f's dialect:
// if token is at least the highest token recorded for key, it records
// token and returns nil; the row stays locked until tx ends, so
// concurrent writers of key queue behind tx.
//
// Errors come in a *fence.OpError ("fence/sql: check "k": ..."). A lower
// token gets a *fence.StaleTokenError (matching fence.ErrStaleToken)
// carrying the highest; a fence row that holds no valid token gets a
// *fence.CorruptError; an empty or over-long key, token 0 or a token
// above MaxToken a *fence.InvalidError; a missing fence table an error
// matching fence.ErrStoreMissing. On any error, roll tx back.
//
// Check before the transaction reads what it will write back is the
// claim of fence.Resource.Claim: once the check holds the row, no write
// with a lower token can land before tx ends, so a read-modify-write
// cannot lose an acknowledged write to a stale holder. Run, RunPgx,
// Locked and LockedPgx check first.
func (f *Fences) Check(ctx context.Context, tx *sql.Tx, key string, token fence.Token) error {
	if tx == nil {
		return opError("check", key, errNilTx)
	}
	return f.checkNative(ctx, sqlTx{tx}, key, token)
}

// CheckPgx is Check for a native pgx transaction.
func (f *Fences) CheckPgx(ctx context.Context, tx pgx.Tx, key string, token fence.Token) error {
	if err := f.noPgx("check", key); err != nil {
		return err
	}
	if tx == nil {
		return opError("check", key, errNilTx)
	}
	return f.checkNative(ctx, pgxTx{tx}, key, token)
}

func (f *Fences) checkNative(ctx context.Context, q querier, key string, token fence.Token) error {
	if err := validWrite(key, token); err != nil {
		return opError("check", key, err)
	}
	return opError("check", key, f.check(ctx, q, key, token))
}

// check is Check on valid input, its errors unwrapped.
func (f *Fences) check(ctx context.Context, q querier, key string, token fence.Token) error {
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

// Highest returns the highest token recorded for key in the fence table,
// 0 if none was, read through db: a *sql.DB or *sql.Conn reads the
// committed token, and a *sql.Tx also sees its own Check. It takes no lock
// and writes nothing. Errors come in a *fence.OpError: a fence row that
// holds no valid token gets a *fence.CorruptError, an empty or over-long
// key a *fence.InvalidError.
func (f *Fences) Highest(ctx context.Context, db SQLQueryer, key string) (fence.Token, error) {
	if db == nil {
		return 0, opError("highest", key, &fence.InvalidError{Field: "db", Reason: "nil"})
	}
	return f.highestNative(ctx, sqlRows{db}, key)
}

// HighestPgx is Highest for pgx: db is a *pgx.Conn, a *pgxpool.Pool or a
// pgx.Tx.
func (f *Fences) HighestPgx(ctx context.Context, db PgxQueryer, key string) (fence.Token, error) {
	if err := f.noPgx("highest", key); err != nil {
		return 0, err
	}
	if db == nil {
		return 0, opError("highest", key, &fence.InvalidError{Field: "db", Reason: "nil"})
	}
	return f.highestNative(ctx, pgxRows{db}, key)
}

func (f *Fences) highestNative(ctx context.Context, q rowQuerier, key string) (fence.Token, error) {
	if err := driver.ValidateKey("key", key, MaxKeyLen); err != nil {
		return 0, opError("highest", key, err)
	}
	h, err := f.highest(ctx, q, key)
	return h, opError("highest", key, err)
}

// highest returns the token recorded for key, 0 if none, its errors
// unwrapped.
func (f *Fences) highest(ctx context.Context, q rowQuerier, key string) (fence.Token, error) {
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
