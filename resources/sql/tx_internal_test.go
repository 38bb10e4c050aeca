package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestCommitMaybeApplied: a failed COMMIT may have been applied unless an
// answer of the database, or the driver's own check before sending, says
// it was not.
func TestCommitMaybeApplied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		err  error
		want bool
	}{
		{"PostgreSQL's error", &pgconn.PgError{Code: "40001"}, false},
		{"PostgreSQL answered ROLLBACK", pgx.ErrTxCommitRollback, false},
		{"MySQL's error", fmt.Errorf("x: %w", &mysql.MySQLError{Number: 1213}), false},
		{"go-sql-driver lost the connection", mysql.ErrInvalidConn, true},
		{"database/sql rolled back on ctx", sql.ErrTxDone, false},
		{"database/sql found ctx done", context.Canceled, false},
		{"database/sql found the deadline passed", context.DeadlineExceeded, false},
		{"a driver's error wrapping ctx's", fmt.Errorf("timeout: %w", context.Canceled), true},
		{"pgx lost the connection reading the answer", fmt.Errorf("x: %w", pgconn.ErrConnClosed), true},
		{"a broken connection", errors.New("unexpected EOF"), true},
	} {
		if got := (&commitError{err: tc.err}).maybeApplied(); got != tc.want {
			t.Errorf("%s (%v): maybeApplied = %v, want %v", tc.desc, tc.err, got, tc.want)
		}
	}
}
