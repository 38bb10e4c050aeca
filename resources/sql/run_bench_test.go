package sql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// BenchmarkLockedPgx measures the fenced one-call transactions against the
// same plain transaction on PostgreSQL with durable commits: the ledger
// write of BenchmarkLedgerPostgres (credit an account, record the entry,
// commit), each statement sent on its own as a caller's fn sends them,
// through a pool, all variants interleaved in one run:
//
//	go test -run XX -bench LockedPgx -benchtime 2000x ./resources/sql
//
// tx is the plain transaction (RunPgxTx); run-fenced the same under a
// handle held across the run (RunPgx: BEGIN and the fence in one round
// trip); tx-check the plain transaction with CheckPgx first (the fence in
// a round trip of its own); locked the whole one-call LockedPgx (lock,
// fenced transaction, release); lock+tx the same lock and release around
// the plain transaction, without a fence. run-fenced/tx is the fence's
// cost in a transaction, locked/lock+tx its cost in the one-call.
func BenchmarkLockedPgx(b *testing.B) {
	conn, _, _ := connect(b)
	l := newLedger(b, conn)
	pool := openPgPool(b, 4, nil)
	ctx := context.Background()
	sess, err := fence.NewSession(pgLocker(b, pool), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sess.Close(context.Background()) })
	held, err := sess.Lock(ctx, "bench/run", nil)
	if err != nil {
		b.Fatal(err)
	}
	update := fmt.Sprintf(`UPDATE %q SET balance = balance + $1 WHERE id = $2`, l.accounts)
	insert := fmt.Sprintf(`INSERT INTO %q (account, amount) VALUES ($1, $2)`, l.entries)
	credit := func(account int64) func(ctx context.Context, tx pgx.Tx) error {
		return func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, update, 1, account); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, insert, account, 1)
			return err
		}
	}
	plain := func(account int64) func(ctx context.Context) error {
		fn := credit(account)
		return func(ctx context.Context) error { return fencesql.RunPgxTx(ctx, pool, pgx.TxOptions{}, fn) }
	}
	runVariants(b, []*variant{
		{name: "tx", write: plain(1)},
		{name: "run-fenced", write: func(ctx context.Context) error {
			return l.fences.RunPgx(ctx, held, pool, credit(2), nil)
		}},
		{name: "tx-check", write: func(ctx context.Context) error {
			fn := credit(3)
			return fencesql.RunPgxTx(ctx, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
				if err := l.fences.CheckPgx(ctx, tx, "bench/check", held.Token()); err != nil {
					return err
				}
				return fn(ctx, tx)
			})
		}},
		{name: "locked", write: func(ctx context.Context) error {
			return l.fences.LockedPgx(ctx, sess, pool, "bench/locked", credit(4), nil)
		}},
		{name: "lock+tx", write: func(ctx context.Context) error {
			h, err := sess.Lock(ctx, "bench/plain", nil)
			if err != nil {
				return err
			}
			err = plain(5)(ctx)
			if rerr := h.Release(ctx); err == nil {
				err = rerr
			}
			return err
		}},
	}, map[string]string{"run-fenced": "tx", "tx-check": "tx", "locked": "lock+tx", "lock+tx": "tx"})
}
