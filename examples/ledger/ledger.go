package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// adjustment is one job: add amount to account. id is the idempotency key
// that the unique constraint checks.
type adjustment struct {
	id      string
	account string
	amount  int64
}

var errDuplicate = errors.New("duplicate adjustment refused by the unique constraint")

// ledger is the protected resource: account balances and the journal of
// applied adjustments, fenced per account by a fence row.
type ledger struct {
	db       *sql.DB
	fences   *fencesql.Fences[*sql.Tx]
	unfenced bool // control runs only: skip the token check
}

func resourceName(account string) string { return "account:" + account }

func setUp(ctx context.Context, e *env, balances map[string]int64) (*ledger, error) {
	serial := "bigserial PRIMARY KEY"
	if e.dialect == fencesql.SQLite {
		serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	stmts := []string{
		"DROP TABLE IF EXISTS ledger_adjustments",
		"DROP TABLE IF EXISTS ledger_accounts",
		"DROP TABLE IF EXISTS " + fenceTable,
		"CREATE TABLE ledger_accounts (id text PRIMARY KEY, balance bigint NOT NULL)",
		"CREATE TABLE ledger_adjustments (seq " + serial + ", id text NOT NULL UNIQUE, account text NOT NULL," +
			" amount bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL)",
	}
	for _, s := range stmts {
		if _, err := e.db.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("set up the ledger: %w", err)
		}
	}
	f, err := fencesql.New(e.db, e.dialect, &fencesql.Options{FenceTable: fenceTable})
	if err != nil {
		return nil, err
	}
	if err := f.Create(ctx); err != nil {
		return nil, err
	}
	for acct, bal := range balances {
		if _, err := e.db.ExecContext(ctx, "INSERT INTO ledger_accounts (id, balance) VALUES ($1, $2)", acct, bal); err != nil {
			return nil, err
		}
	}
	return &ledger{db: e.db, fences: f}, nil
}

func (l *ledger) balance(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, account string) (int64, error) {
	var b int64
	err := q.QueryRowContext(ctx, "SELECT balance FROM ledger_accounts WHERE id = $1", account).Scan(&b)
	return b, err
}

// apply records adj and sets the account's balance to newBalance(current)
// in one transaction, under token. The fence check comes first, in the same
// transaction: a stale token rolls everything back. (Under a handle,
// Fences.Run does the same; the paused worker holds a bare lease.)
func (l *ledger) apply(ctx context.Context, adj adjustment, token fence.Token, worker string,
	newBalance func(current int64) int64) error {
	return l.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if !l.unfenced {
			if err := l.fences.Check(ctx, tx, resourceName(adj.account), token); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO ledger_adjustments (id, account, amount, token, worker)"+
			" VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING", adj.id, adj.account, adj.amount, int64(token), worker)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return errDuplicate
		}
		cur, err := l.balance(ctx, tx, adj.account)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE ledger_accounts SET balance = $1 WHERE id = $2", newBalance(cur), adj.account)
		return err
	})
}

// inTx runs fn in a transaction and commits it, running it again while
// the database reports a conflict that a new attempt can pass
// (fencesql.Retryable: a serialization failure, a deadlock, SQLITE_BUSY).
func (l *ledger) inTx(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := l.tryTx(ctx, fn)
		if err == nil || !fencesql.Retryable(err) || attempt == 20 || ctx.Err() != nil {
			return err
		}
	}
}

func (l *ledger) tryTx(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
