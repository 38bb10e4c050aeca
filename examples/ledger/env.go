package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// env is where the demo keeps its locks and its ledger.
type env struct {
	name    string
	locker  *fence.Locker
	db      *sql.DB
	dialect fencesql.Dialect
	close   func()
}

const (
	lockTable  = "ledger_locks"
	fenceTable = "ledger_fences"
)

// openEnv opens PostgreSQL when url is set, and otherwise the embedded
// default: an in-memory locker and SQLite in a temporary directory.
func openEnv(ctx context.Context, url string) (*env, error) {
	if url == "" {
		return openEmbedded()
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	locker, err := postgres.New(pool, &postgres.Options{Table: lockTable})
	if err == nil {
		err = locker.Create(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &env{
		name: "PostgreSQL locker + PostgreSQL ledger", locker: locker, db: db, dialect: fencesql.PostgreSQL,
		close: func() { db.Close(); pool.Close() },
	}, nil
}

func openEmbedded() (*env, error) {
	dir, err := os.MkdirTemp("", "fence-ledger-")
	if err != nil {
		return nil, err
	}
	dsn := "file:" + filepath.Join(dir, "ledger.db") +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &env{
		name: "in-memory locker + SQLite ledger", locker: memory.New(nil), db: db, dialect: fencesql.SQLite,
		close: func() { db.Close(); os.RemoveAll(dir) },
	}, nil
}
