package sql

import (
	"context"
	"fmt"

	"github.com/fencekit/fence/internal/pgcreate"
)

// quotedTables returns the fence and value table names of t quoted for d.
func quotedTables(d Dialect, t Options) (fenceTable, valueTable string, err error) {
	if fenceTable, err = d.quoteTable("fence table", t.FenceTable); err != nil {
		return "", "", err
	}
	if valueTable, err = d.quoteTable("value table", t.ValueTable); err != nil {
		return "", "", err
	}
	return fenceTable, valueTable, nil
}

// schemaSQL returns the statements of Fences.SchemaSQL for the tables of
// t, whose names are filled in.
func schemaSQL(d Dialect, t Options) ([]string, error) {
	ft, vt, err := quotedTables(d, t)
	if err != nil {
		return nil, err
	}
	switch d {
	case MySQL:
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
	case SQLite:
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

// createTables runs the statements of schemaSQL(d, t) with exec, its
// errors unwrapped, each again after a conflict (Retryable); on
// PostgreSQL, as one statement under the tables' advisory locks (see
// internal/pgcreate).
func createTables(ctx context.Context, d Dialect, t Options, exec func(ctx context.Context, stmt string) error) error {
	stmts, err := schemaSQL(d, t)
	if err != nil {
		return err
	}
	if d == PostgreSQL {
		ft, vt, err := quotedTables(d, t)
		if err != nil {
			return err
		}
		stmts = []string{pgcreate.Statement([]string{ft, vt}, stmts...)}
	}
	for _, s := range stmts {
		// Every statement creates only what is missing, so a conflict
		// with a concurrent creator (SQLite answers SQLITE_BUSY to a
		// connection that opens or changes the schema while another
		// does, even with a busy timeout) runs it again.
		if err := retry(ctx, func() error { return exec(ctx, s) }); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
	}
	return nil
}
