package sql_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

func TestQueueCheckFencesABatch(t *testing.T) {
	t.Parallel()
	conn, _, _ := connect(t)
	l := newLedger(t, conn)
	ctx := t.Context()
	steps := []struct {
		token   fence.Token
		stale   bool
		highest fence.Token
	}{
		{10, false, 10},
		{10, false, 10}, // equal passes
		{12, false, 12},
		{11, true, 12},
		{1, true, 12},
		{12, false, 12},
	}
	var wantBalance, wantEntries int64
	for i, s := range steps {
		err := l.write(ctx, conn, 1, 100, s.token)
		if s.stale {
			wantStale(t, err, s.token, s.highest)
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		} else {
			wantBalance, wantEntries = wantBalance+100, wantEntries+1
		}
		// A refused batch changed nothing: the statements after the fence
		// never ran.
		if bal, n := l.balance(t, conn, 1); bal != wantBalance || n != wantEntries {
			t.Fatalf("step %d: balance %d with %d entries; want %d with %d", i, bal, n, wantBalance, wantEntries)
		}
	}
}

func TestQueueCheckInAnExplicitTransaction(t *testing.T) {
	t.Parallel()
	conn, _, _ := connect(t)
	l := newLedger(t, conn)
	ctx := t.Context()
	send := func(token fence.Token) error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		b := &pgx.Batch{}
		if err := l.fences.QueueCheck(b, "account/2", token); err != nil {
			return err
		}
		l.queueWrite(b, 2, 5)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	if err := send(7); err != nil {
		t.Fatal(err)
	}
	wantStale(t, send(6), 6, 7)
	if bal, n := l.balance(t, conn, 2); bal != 5 || n != 1 {
		t.Fatalf("balance %d with %d entries; want 5 with 1", bal, n)
	}
}

func TestQueueCheckMustComeFirst(t *testing.T) {
	t.Parallel()
	conn, _, _ := connect(t)
	l := newLedger(t, conn)
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	if err := l.fences.QueueCheck(b, "a", 1); err != nil {
		t.Fatalf("after BEGIN: %v", err)
	}
	if err := l.fences.QueueCheck(b, "b", 1); err != nil {
		t.Fatalf("after another fence: %v", err)
	}
	l.queueWrite(b, 1, 1)
	if err := l.fences.QueueCheck(b, "c", 1); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("after a write: err = %v; want ErrInvalid", err)
	}
	for _, tc := range []struct {
		name  string
		token fence.Token
	}{{"", 1}, {"x", 0}} {
		if err := l.fences.QueueCheck(&pgx.Batch{}, tc.name, tc.token); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("QueueCheck(%q, %d) err = %v; want ErrInvalid", tc.name, tc.token, err)
		}
	}
	if err := l.fences.QueueCheck(nil, "x", 1); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("QueueCheck(nil batch) err = %v; want ErrInvalid", err)
	}
}

// TestQueueCheckCostsNoRoundTrip counts, with a pgx tracer and on the
// socket, what a batched ledger write costs with and without the fence:
// the fence adds no call and no round trip.
func TestQueueCheckCostsNoRoundTrip(t *testing.T) {
	t.Parallel()
	conn, rt, tr := connect(t)
	l := newLedger(t, conn)
	ctx := t.Context()
	measure := func(token fence.Token) (calls int64, flights int) {
		// Warm the statement cache first: the first use of a statement
		// costs a round trip to prepare it, fenced or not.
		for range 2 {
			if err := l.write(ctx, conn, 3, 1, token); err != nil {
				t.Fatal(err)
			}
		}
		c0, f0 := tr.calls.Load(), rt.count()
		if err := l.write(ctx, conn, 3, 1, token); err != nil {
			t.Fatal(err)
		}
		return tr.calls.Load() - c0, rt.count() - f0
	}
	plainCalls, plainFlights := measure(0)
	fencedCalls, fencedFlights := measure(5)
	t.Logf("ledger write: %d calls, %d round trips unfenced; %d calls, %d round trips fenced",
		plainCalls, plainFlights, fencedCalls, fencedFlights)
	if fencedCalls != plainCalls || fencedFlights != plainFlights {
		t.Fatalf("fenced write costs %d calls and %d round trips; unfenced %d and %d",
			fencedCalls, fencedFlights, plainCalls, plainFlights)
	}
	if plainFlights != 2 {
		t.Fatalf("a batched write took %d round trips; want 2 (batch, commit)", plainFlights)
	}
	// A fence checked on its own costs one more, which the batch saves.
	c0, f0 := tr.calls.Load(), rt.count()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.fences.CheckPgx(ctx, tx, fmt.Sprintf("account/%d", 3), 5); err != nil {
		t.Fatal(err)
	}
	b := &pgx.Batch{}
	l.queueWrite(b, 3, 1)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("with a separate CheckPgx: %d calls, %d round trips", tr.calls.Load()-c0, rt.count()-f0)
}
