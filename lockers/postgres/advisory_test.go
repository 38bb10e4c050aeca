package postgres

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// TestAdvisoryKeyGolden pins the hash that other languages reproduce: the
// FNV-1a 64-bit test vectors of its specification, as int64.
func TestAdvisoryKeyGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		key  string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		if got := AdvisoryKey(tt.key); got != int64(tt.want) {
			t.Errorf("AdvisoryKey(%q) = %d, want %d (%#x)", tt.key, got, int64(tt.want), tt.want)
		}
	}
}

// TestTryXactLock: the lock is held by one transaction until it ends, a
// second transaction is refused meanwhile, and the server's pg_locks shows
// the documented key.
func TestTryXactLock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 3, nil)
	key := uniqueName("advisory-")
	begin := func() pgx.Tx {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		return tx
	}
	try := func(tx pgx.Tx) bool {
		t.Helper()
		ok, err := TryXactLock(ctx, tx, key)
		if err != nil {
			t.Fatalf("TryXactLock: %v", err)
		}
		return ok
	}

	first, second := begin(), begin()
	if !try(first) {
		t.Fatal("first transaction did not get a free lock")
	}
	if !try(first) {
		t.Error("the holding transaction could not take its lock again")
	}
	var classid, objid uint32
	if err := first.QueryRow(ctx, `SELECT classid::oid::bigint, objid::oid::bigint FROM pg_locks
WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND objsubid = 1`).Scan(&classid, &objid); err != nil {
		t.Fatalf("reading pg_locks: %v", err)
	}
	if got := int64(uint64(classid)<<32 | uint64(objid)); got != AdvisoryKey(key) {
		t.Errorf("pg_locks holds key %d, want AdvisoryKey = %d", got, AdvisoryKey(key))
	}
	if try(second) {
		t.Fatal("second transaction got the lock while the first held it")
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !try(second) {
		t.Fatal("second transaction did not get the lock after the first committed")
	}
	if err := second.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if !try(begin()) {
		t.Error("the lock outlived the transaction that rolled back")
	}

	if _, err := TryXactLock(ctx, begin(), ""); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("TryXactLock with an empty key: %v, want ErrInvalid", err)
	}
}
