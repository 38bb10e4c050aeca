package pgcreate_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence/internal/pgcreate"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestStatementQuotesAnyName: tables whose names hold the dollar-quote
// tags Statement would otherwise use are created, twice (the second time
// leaves them), and exist afterwards. The concurrent creators are tested
// where the statement is used (internal/testlockers and resources/sql,
// TestConcurrentCreate).
func TestStatementQuotesAnyName(t *testing.T) {
	t.Parallel()
	conn, err := pgx.Connect(t.Context(), testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	suffix := strings.ToLower(rand.Text()[:8])
	names := []string{"a$fence$" + suffix, "b$fence0$" + suffix}
	var quoted, stmts []string
	for _, n := range names {
		q := pgx.Identifier{n}.Sanitize()
		quoted = append(quoted, q)
		stmts = append(stmts, "CREATE TABLE IF NOT EXISTS "+q+" (k text PRIMARY KEY)")
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+q); err != nil {
				t.Errorf("drop %s: %v", q, err)
			}
		})
	}
	stmt := pgcreate.Statement(quoted, stmts...)
	if !strings.HasPrefix(stmt, "DO $fence1$") {
		t.Errorf("statement %q; want the tag $fence1$, which neither name holds", stmt)
	}
	for range 2 {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, n := range names {
		var exists bool
		if err := conn.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{n}.Sanitize()).Scan(&exists); err != nil || !exists {
			t.Errorf("table %q exists: %v, %v; want true", n, exists, err)
		}
	}
}
