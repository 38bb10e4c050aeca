package torture

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// newTestLedgers returns the ledger of a run on an SQLite file with
// accounts a, b and c, fenced as asked, and its checker's view.
func newTestLedgers(t *testing.T, fenced bool) (work, check *ledger, accounts []string) {
	t.Helper()
	s, err := newStage(NetFaults{}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	accounts = []string{"a", "b", "c"}
	work, check, err = openLedgers(t.Context(), s, SQLiteResource, accounts, fenced)
	if err != nil {
		t.Fatal(err)
	}
	return work, check, accounts
}

// lockAll takes keys in a session of its own on l.
func lockAll(t *testing.T, l *fence.Locker, keys ...string) []*fence.Handle {
	t.Helper()
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	hs, err := s.LockAll(t.Context(), keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// move writes, under hs, the balances a transfer of amount from hs[0] to
// hs[1] computes from bal, and records it as transfer id; careful as
// ledger.claimed says.
func move(ctx context.Context, l *ledger, hs []*fence.Handle, careful bool, id string, bal map[string]int64, amount int64) error {
	src, dst := hs[0].Key(), hs[1].Key()
	next := map[string]int64{src: bal[src] - amount, dst: bal[dst] + amount}
	return l.claimed(ctx, hs, careful, func(ctx context.Context, tx *sql.Tx) error {
		return l.write(ctx, tx, id, next, []leg{{src: src, dst: dst, amount: amount, srcToken: hs[0].Token(), dstToken: hs[1].Token()}})
	})
}

// read returns the balances of hs's accounts, claimed with their tokens
// when l is fenced.
func read(t *testing.T, l *ledger, hs []*fence.Handle) map[string]int64 {
	t.Helper()
	var keys []string
	for _, h := range hs {
		keys = append(keys, h.Key())
	}
	var bal map[string]int64
	err := l.claimed(t.Context(), hs, false, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		bal, err = l.balances(ctx, tx, keys)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return bal
}

// A holder whose leases were broken read a and b, and writes them back
// after a newer holder of a and c moved money from a to c (through
// Fences.RunAll in the fenced run): fenced, its
// write is refused as a whole and the ledger checks out; unfenced, it
// lands, and the checker finds the total not conserved and a's balance
// off its ledger.
func TestTransferStaleHolder(t *testing.T) {
	t.Parallel()
	for _, fenced := range []bool{true, false} {
		name := map[bool]string{true: "fenced", false: "control"}[fenced]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			l, check, accounts := newTestLedgers(t, fenced)
			locker := memory.New(nil)
			old := lockAll(t, locker, "a", "b")
			stale := read(t, l, old)
			for _, k := range []string{"a", "b"} {
				if err := locker.Break(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			newer := lockAll(t, locker, "a", "c")
			if err := move(ctx, l, newer, true, "w2.1", read(t, l, newer), 300); err != nil {
				t.Fatalf("the newer holder's transfer: %v", err)
			}
			err := move(ctx, l, old, false, "w1.1", stale, 100)
			outcome := transferOutcome(err)
			attempts := []Attempt{{Worker: 2, Seq: 1, Outcome: Applied}, {Worker: 1, Seq: 1, Outcome: outcome}}
			v, cerr := checkTransfers(ctx, check, accounts, attempts)
			if cerr != nil {
				t.Fatal(cerr)
			}
			var kinds []string
			for _, x := range v.Violations {
				kinds = append(kinds, x.Kind)
			}
			if fenced {
				if !errors.Is(err, fence.ErrStaleToken) || outcome != Stale {
					t.Fatalf("the stale holder's write: %v (%v); want a stale token", err, outcome)
				}
				if len(v.Violations) > 0 || len(v.Lost) > 0 || v.Stored != 1 {
					t.Fatalf("fenced verdict %+v; want 1 transfer and nothing wrong", v)
				}
				return
			}
			if err != nil {
				t.Fatalf("the stale holder's unfenced write: %v", err)
			}
			if !slices.Contains(kinds, KindNotConserved) || !slices.Contains(kinds, KindLedger) || v.Stored != 2 {
				t.Fatalf("control verdict %v (%+v); want not-conserved and ledger-mismatch over 2 transfers", kinds, v)
			}
		})
	}
}

// The checker finds, in the ledger, each way a transfer run can go wrong:
// a negative account, a transfer acknowledged and missing, one refused
// and recorded, one failed before its COMMIT and recorded.
func TestCheckTransfers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, check, accounts := newTestLedgers(t, false)
	hs := lockAll(t, memory.New(nil), "a", "b")
	// Recorded as transfer w1.1: a pays 1500, more than it holds, but its
	// balance is written as if it had: the ledger agrees, a is negative.
	if err := move(ctx, check, hs, false, "w1.1", map[string]int64{"a": 1000, "b": 1000}, 1500); err != nil {
		t.Fatal(err)
	}
	if err := move(ctx, check, hs, false, "w1.2", map[string]int64{"a": -500, "b": 2500}, 10); err != nil {
		t.Fatal(err)
	}
	if err := move(ctx, check, hs, false, "w1.3", map[string]int64{"a": -510, "b": 2510}, 10); err != nil {
		t.Fatal(err)
	}
	attempts := []Attempt{
		{Worker: 1, Seq: 1, Outcome: Applied},
		{Worker: 1, Seq: 2, Outcome: Stale},
		{Worker: 1, Seq: 3, Outcome: Failed},
		{Worker: 1, Seq: 4, Outcome: Applied}, // never recorded
		{Worker: 1, Seq: 5, Outcome: Unknown}, // never recorded: fine
	}
	v, err := checkTransfers(ctx, check, accounts, attempts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, x := range v.Violations {
		got[x.Kind]++
	}
	want := map[string]int{KindNegative: 1, KindRejectedPresent: 1, KindPhantom: 1}
	if len(got) != len(want) || got[KindNegative] != 1 || got[KindRejectedPresent] != 1 || got[KindPhantom] != 1 {
		t.Errorf("violations %v (%v); want %v", got, v.Violations, want)
	}
	if len(v.Lost) != 1 || v.Lost[0].ID() != "w1.4" || v.Stored != 3 {
		t.Errorf("lost %v, stored %d; want w1.4 lost of 3 transfers", v.Lost, v.Stored)
	}
}

func TestTransferConfig(t *testing.T) {
	t.Parallel()
	c := Config{Transfer: true}
	c.fill()
	if c.Keys != 4 {
		t.Errorf("a transfer run's default accounts: %d; want 4", c.Keys)
	}
	c.Keys = 2
	if err := c.validate(); err == nil {
		t.Error("a transfer run on 2 accounts passed validation")
	}
}
