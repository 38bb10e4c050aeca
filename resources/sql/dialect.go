package sql

import (
	"fmt"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/sql/internal/ident"
)

// Dialect names the database behind a *sql.DB, for New. PostgreSQL and
// SQLite share the statements that check tokens ($n placeholders, double
// quotes, INSERT .. ON CONFLICT .. RETURNING) and differ in the schema;
// MySQL has statements of its own (see the package doc). NewPgx is
// always PostgreSQL.
type Dialect int

const (
	// PostgreSQL 9.5 or later (upsert); tested on 15.
	PostgreSQL Dialect = iota + 1
	// SQLite 3.37 or later (STRICT tables, upsert, RETURNING).
	SQLite
	// MySQL is MariaDB 10.5 or later and MySQL 8.0.16 or later (CHECK
	// constraints enforced), through github.com/go-sql-driver/mysql;
	// tested on MariaDB 10.11, unverified on MySQL 8, which no test here
	// runs.
	MySQL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	case MySQL:
		return "MySQL"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

func (d Dialect) validate() error {
	if d != PostgreSQL && d != SQLite && d != MySQL {
		return &fence.InvalidError{Field: "dialect", Reason: fmt.Sprintf("unknown dialect %d", int(d))}
	}
	return nil
}

// quote returns name quoted for d: in backquotes for MySQL, in double
// quotes otherwise; or an *fence.InvalidError naming field.
func (d Dialect) quote(field, name string) (string, error) {
	return ident.Quote(d == MySQL, field, name)
}

// quoteTable quotes a table name, "table" or "schema.table", for d; in
// MySQL the schema is the database.
func (d Dialect) quoteTable(field, name string) (string, error) {
	return ident.QuoteTable(d == MySQL, field, name)
}
