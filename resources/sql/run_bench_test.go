package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// BenchmarkRunPgx measures the fenced transactions against the same
// plain transaction on PostgreSQL with durable commits: the ledger write
// of BenchmarkLedgerPostgres (credit an account, record the entry,
// commit), each statement sent on its own as a caller's fn sends them,
// through a pool, all variants interleaved in one run:
//
//	go test -run XX -bench RunPgx -benchtime 2000x ./resources/sql
//
// tx is the plain transaction (retried on conflicts as Run's are);
// run-fenced the same under a handle held across the run (Run: BEGIN and
// the fence in one round trip); tx-check the plain transaction with Check
// first (the fence in a round trip of its own); lock+run a lock taken and
// released around each Run (what guard.Run around Run does); lock+tx the
// same lock and release around the plain transaction, without a fence.
// run-fenced/tx is the fence's cost in a transaction, lock+run/lock+tx
// its cost under a lock of its own.
func BenchmarkRunPgx(b *testing.B) {
	conn, _, _ := connect(b)
	l := newLedger(b, conn)
	pool := openPgPool(b, 4, nil)
	f, err := fencesql.NewPgx(pool, &fencesql.Options{FenceTable: l.fenceTable})
	if err != nil {
		b.Fatal(err)
	}
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
		return func(ctx context.Context) error { return fencesql.InTx(ctx, f, sql.LevelDefault, fn) }
	}
	underLock := func(key string, write func(ctx context.Context, h *fence.Handle) error) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			h, err := sess.Lock(ctx, key, nil)
			if err != nil {
				return err
			}
			err = write(ctx, h)
			if rerr := h.Release(ctx); err == nil {
				err = rerr
			}
			return err
		}
	}
	runVariants(b, []*variant{
		{name: "tx", write: plain(1)},
		{name: "run-fenced", write: func(ctx context.Context) error {
			return f.Run(ctx, held, credit(2), nil)
		}},
		{name: "tx-check", write: func(ctx context.Context) error {
			fn := credit(3)
			return fencesql.InTx(ctx, f, sql.LevelDefault, func(ctx context.Context, tx pgx.Tx) error {
				if err := f.Check(ctx, tx, "bench/check", held.Token()); err != nil {
					return err
				}
				return fn(ctx, tx)
			})
		}},
		{name: "lock+run", write: underLock("bench/locked", func(ctx context.Context, h *fence.Handle) error {
			return f.Run(ctx, h, credit(4), nil)
		})},
		{name: "lock+tx", write: underLock("bench/plain", func(ctx context.Context, _ *fence.Handle) error {
			return plain(5)(ctx)
		})},
	}, map[string]string{"run-fenced": "tx", "tx-check": "tx", "lock+run": "lock+tx", "lock+tx": "tx"})
}
