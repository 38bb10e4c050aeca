package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// rowQuerier is a database or transaction of either driver family, as
// the package's reads use it.
type rowQuerier interface {
	queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error }
}

// querier is a transaction of either driver family, as the package's
// statements use it.
type querier interface {
	rowQuerier
	exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
}

// conn is the side of a Fences that depends on the driver family: how it
// runs transactions of type Tx on the caller's database. stdConn and
// pgxConn are the two.
type conn[Tx any] interface {
	// wrap adapts a transaction to the package's statements.
	wrap(tx Tx) querier
	// isNil reports whether tx is nil.
	isNil(tx Tx) bool
	// checkIso checks an isolation level for the family.
	checkIso(iso sql.IsolationLevel) error
	// runTx runs fn in a transaction begun at iso, committed if fn
	// returns nil, rolled back otherwise (also when fn panics), and run
	// again from the start after a conflict (see retry). Its errors are
	// fn's, or a *beginError, *commitError or *conflictError.
	runTx(ctx context.Context, iso sql.IsolationLevel, fn func(context.Context, Tx) error) error
	// read calls fn with the database itself, outside a transaction (a
	// statement of its own, which reads one snapshot and, in SQLite, does
	// not wait for a writer), again after a conflict.
	read(ctx context.Context, fn func(ctx context.Context, q rowQuerier) error) error
	// attempt is one attempt of Run or RunAll (see Fences.Run): BEGIN at
	// iso and the fences of checks, in their order, sent with work; fn
	// with work; and, after a last look at work, the COMMIT, sent with
	// ctx.
	attempt(ctx, work context.Context, row *fenceRow, checks []fenceCheck, iso sql.IsolationLevel, fn func(context.Context, Tx) error) error
}

// fenceCheck is one fence a fenced transaction passes first: the fence
// row of name, with token.
type fenceCheck struct {
	name  string
	token fence.Token
}

// stdConn is database/sql.
type stdConn struct{ db *sql.DB }

// sqlTx adapts a database/sql transaction.
type sqlTx struct{ tx *sql.Tx }

func (q sqlTx) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.tx.QueryRowContext(ctx, query, args...)
}

func (q sqlTx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// sqlDB adapts a database/sql database.
type sqlDB struct{ db *sql.DB }

func (q sqlDB) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.db.QueryRowContext(ctx, query, args...)
}

func (stdConn) wrap(tx *sql.Tx) querier { return sqlTx{tx} }

func (c stdConn) read(ctx context.Context, fn func(context.Context, rowQuerier) error) error {
	return retry(ctx, func() error { return fn(ctx, sqlDB{c.db}) })
}

func (stdConn) isNil(tx *sql.Tx) bool { return tx == nil }

// checkIso leaves the level to the driver, which refuses one it lacks
// when the transaction begins.
func (stdConn) checkIso(sql.IsolationLevel) error { return nil }

// stdTxOptions are the options that begin a transaction at iso.
func stdTxOptions(iso sql.IsolationLevel) *sql.TxOptions {
	if iso == sql.LevelDefault {
		return nil
	}
	return &sql.TxOptions{Isolation: iso}
}

func (c stdConn) runTx(ctx context.Context, iso sql.IsolationLevel, fn func(context.Context, *sql.Tx) error) error {
	return retry(ctx, func() error {
		tx, err := c.db.BeginTx(ctx, stdTxOptions(iso))
		if err != nil {
			return &beginError{err}
		}
		if err := callRollingBack(ctx, tx, fn, func() { _ = tx.Rollback() }); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return &commitError{err: err}
		}
		return nil
	})
}

// attempt begins the transaction with work, as database/sql ties a
// transaction to the context it was begun with: work ending rolls it
// back. Each fence is a statement of its own (two in MySQL).
func (c stdConn) attempt(_, work context.Context, row *fenceRow, checks []fenceCheck, iso sql.IsolationLevel, fn func(context.Context, *sql.Tx) error) error {
	tx, err := c.db.BeginTx(work, stdTxOptions(iso))
	if err != nil {
		return &beginError{err}
	}
	rollback := func() { _ = tx.Rollback() }
	for _, ch := range checks {
		if err := opError("check", ch.name, row.check(work, sqlTx{tx}, ch.name, ch.token)); err != nil {
			rollback()
			return err
		}
	}
	if err := callRollingBack(work, tx, fn, rollback); err != nil {
		return err
	}
	if work.Err() != nil {
		rollback()
		return context.Cause(work)
	}
	if err := tx.Commit(); err != nil {
		return &commitError{err: err}
	}
	return nil
}

// pgxConn is native pgx.
type pgxConn struct{ db PgxDB }

// pgxTx adapts a pgx transaction.
type pgxTx struct{ tx pgx.Tx }

func (q pgxTx) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.tx.QueryRow(ctx, query, args...)
}

func (q pgxTx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.tx.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// pgxDB adapts a pgx pool or connection.
type pgxDB struct{ db PgxDB }

func (q pgxDB) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.db.QueryRow(ctx, query, args...)
}

func (pgxConn) wrap(tx pgx.Tx) querier { return pgxTx{tx} }

func (c pgxConn) read(ctx context.Context, fn func(context.Context, rowQuerier) error) error {
	return retry(ctx, func() error { return fn(ctx, pgxDB{c.db}) })
}

func (pgxConn) isNil(tx pgx.Tx) bool { return tx == nil }

func (pgxConn) checkIso(iso sql.IsolationLevel) error {
	_, err := pgxTxOptions(iso)
	return err
}

// pgxTxOptions are the options that begin a pgx transaction at iso.
func pgxTxOptions(iso sql.IsolationLevel) (pgx.TxOptions, error) {
	switch iso {
	case sql.LevelDefault:
		return pgx.TxOptions{}, nil
	case sql.LevelReadUncommitted:
		return pgx.TxOptions{IsoLevel: pgx.ReadUncommitted}, nil
	case sql.LevelReadCommitted:
		return pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, nil
	case sql.LevelRepeatableRead:
		return pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, nil
	case sql.LevelSerializable:
		return pgx.TxOptions{IsoLevel: pgx.Serializable}, nil
	}
	return pgx.TxOptions{}, &fence.InvalidError{Field: "isolation", Reason: fmt.Sprintf("%v is not a PostgreSQL isolation level", iso)}
}

func (c pgxConn) runTx(ctx context.Context, iso sql.IsolationLevel, fn func(context.Context, pgx.Tx) error) error {
	opts, err := pgxTxOptions(iso)
	if err != nil {
		return err
	}
	return retry(ctx, func() error {
		tx, err := c.db.BeginTx(ctx, opts)
		if err != nil {
			return &beginError{err}
		}
		if err := callRollingBack(ctx, tx, fn, func() { rollbackPgx(ctx, tx) }); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return &commitError{err: err}
		}
		return nil
	})
}

// rollbackPgx rolls tx back, also when ctx is done.
func rollbackPgx(ctx context.Context, tx pgx.Tx) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	_ = tx.Rollback(rctx)
}

// attempt sends BEGIN and the fences in one batch (pgx.Batch.BeginTx and
// the raising form of the fence statement), so the fences cost no round
// trip of their own. The COMMIT is sent with ctx: a lease lost while it is
// in flight does not cut it off, as the fences have admitted the write.
func (c pgxConn) attempt(ctx, work context.Context, row *fenceRow, checks []fenceCheck, iso sql.IsolationLevel, fn func(context.Context, pgx.Tx) error) error {
	opts, err := pgxTxOptions(iso)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.BeginTx(opts)
	var checked bool
	for _, ch := range checks {
		b.Queue(row.raise, ch.name, int64(ch.token)).QueryRow(func(r pgx.Row) error {
			checked = true
			return opError("check", ch.name, row.raised(r, ch.name, ch.token))
		})
	}
	br := c.db.SendBatch(work, b)
	tx := br.Tx()
	rollback := func() {
		if tx != nil {
			rollbackPgx(ctx, tx)
		}
	}
	if err := br.Close(); err != nil {
		rollback()
		if checked {
			return err // the fence's verdict, or its failure
		}
		return &beginError{err}
	}
	if tx == nil {
		return &beginError{errors.New("the batch began no transaction (db's SendBatch does not honour pgx.Batch.BeginTx)")}
	}
	if err := callRollingBack(work, tx, fn, rollback); err != nil {
		return err
	}
	if work.Err() != nil {
		rollback()
		return context.Cause(work)
	}
	if err := tx.Commit(ctx); err != nil {
		return &commitError{err: err}
	}
	return nil
}

// isNoRows reports whether err says a query returned no row.
func isNoRows(err error) bool {
	return errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows)
}
