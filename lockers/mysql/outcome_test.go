package mysql

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestOutcomeNotInheritedFromLastStatement runs, on one connection, a
// statement that sets LAST_INSERT_ID to the lease's token (a renewal)
// and then statements that must fail: each reads its own outcome, never
// the value the session's previous statement left. A renewal within the
// same microsecond as the last (an identical rewrite, 0 rows changed) is
// still a renewal.
func TestOutcomeNotInheritedFromLastStatement(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t, 1)
	for _, noReturning := range []bool{false, true} {
		l := newTable(t, db)
		if noReturning {
			l.d.dia.set(dialectNoReturns)
		}
		lease, err := l.Acquire(ctx, "k", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lease, err = l.Renew(ctx, lease); err != nil {
			t.Fatal(err)
		}
		if err := l.Break(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Renew(ctx, lease); !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("Renew after Break = %v, want ErrNotHeld", err)
		}
		if err := l.Release(ctx, lease); !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("Release after Break = %v, want ErrNotHeld", err)
		}
		// A held key after a statement that set LAST_INSERT_ID: the
		// Acquire that loses reads 0 from its own statement.
		again, err := l.Acquire(ctx, "k", time.Minute, nil)
		if err != nil || again.Token != lease.Token+1 {
			t.Fatalf("Acquire = %v, %v; want token %d", again.Token, err, lease.Token+1)
		}
		if again, err = l.Renew(ctx, again); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
			t.Errorf("Acquire of a held key after a renewal = %v, want ErrHeld", err)
		}
		// An identical rewrite: the same expiry written again.
		mustExec(t, db, "UPDATE "+l.quotedTable()+" SET expires_at = '2999-01-01' WHERE `key` = 'k'")
		res, err := db.ExecContext(ctx, "UPDATE "+l.quotedTable()+" SET expires_at = '2999-01-01', token = LAST_INSERT_ID(token) WHERE `key` = 'k'")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Logf("an identical rewrite counted %d rows changed", n)
		}
		if id, _ := res.LastInsertId(); id != int64(again.Token) {
			t.Errorf("an identical rewrite returned LAST_INSERT_ID %d, want the token %d", id, again.Token)
		}
	}
}
