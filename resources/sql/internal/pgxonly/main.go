// Command pgxonly is the smallest program that fences a write with
// resources/sql through native pgx. TestPgxProgramLinksNoOtherDriver in
// resources/sql lists its dependencies: neither SQLite nor the MySQL
// driver may be among them.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	memlock "github.com/fencekit/fence/lockers/memory"
	fencesql "github.com/fencekit/fence/resources/sql"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "pgxonly:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer pool.Close()
	fences, err := fencesql.NewPgx(pool, nil)
	if err != nil {
		return err
	}
	if err := fences.Create(ctx); err != nil {
		return err
	}
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		return err
	}
	defer sess.Close(ctx)
	h, err := sess.Lock(ctx, "account:alice", nil)
	if err != nil {
		return err
	}
	defer h.Release(ctx)
	return fences.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'")
		return err
	}, nil)
}
