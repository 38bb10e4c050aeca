package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestRenewBatch renews, in one statement on the store, leases in every
// state a keepalive meets: held (with different TTLs, one given twice),
// expired on the server, released, broken, taken over after expiry, and
// never issued. Only the held ones are extended, each by its own TTL.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 2, nil)
	l := newTable(t, pool)
	acquire := func(key string, ttl time.Duration) fence.Lease {
		t.Helper()
		lease, err := l.Acquire(ctx, key, ttl, nil)
		if err != nil {
			t.Fatalf("Acquire %q: %v", key, err)
		}
		return lease
	}
	short := acquire("short", time.Minute)
	long := acquire("long", 2*time.Hour)
	expired := acquire("expired", shortTTL)
	takenOver := acquire("taken-over", shortTTL)
	released := acquire("released", time.Minute)
	broken := acquire("broken", time.Minute)
	if err := l.Release(ctx, released); err != nil {
		t.Fatal(err)
	}
	if err := l.Break(ctx, "broken"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(shortTTL + 20*time.Millisecond)
	successor := acquire("taken-over", time.Minute)
	never := fence.Lease{Key: "short", Owner: short.Owner, Token: short.Token + 7, TTL: time.Minute}
	beyond := fence.Lease{Key: "short", Owner: short.Owner, Token: 1 << 63, TTL: time.Minute}

	cases := []struct {
		name  string
		lease fence.Lease
		held  bool
	}{
		{"held, TTL 1 min", short, true},
		{"expired", expired, false},
		{"held, TTL 2 h", long, true},
		{"taken over", takenOver, false},
		{"released", released, false},
		{"broken", broken, false},
		{"held, given twice", short, true},
		{"successor", successor, true},
		{"token never issued", never, false},
		{"token beyond bigint", beyond, false},
	}
	leases := make([]fence.Lease, len(cases))
	for i, c := range cases {
		leases[i] = c.lease
	}
	errs := l.d.RenewBatch(ctx, leases)
	if len(errs) != len(cases) {
		t.Fatalf("RenewBatch answered %d leases of %d", len(errs), len(cases))
	}
	for i, c := range cases {
		switch err := errs[i]; {
		case c.held && err != nil:
			t.Errorf("%s: %v, want renewed", c.name, err)
		case !c.held && !errors.Is(err, fence.ErrNotHeld):
			t.Errorf("%s: %v, want ErrNotHeld", c.name, err)
		}
	}

	// Each held lease now ends its own TTL after the statement; the
	// others were not touched.
	left := func(key string) time.Duration {
		t.Helper()
		var us *int64
		err := pool.QueryRow(ctx, `SELECT (extract(epoch FROM expires_at - statement_timestamp()) * 1e6)::bigint FROM `+
			l.quotedTable()+` WHERE key = $1`, key).Scan(&us)
		if err != nil {
			t.Fatalf("read %q: %v", key, err)
		}
		if us == nil {
			return 0
		}
		return time.Duration(*us) * time.Microsecond
	}
	for key, want := range map[string]time.Duration{"short": time.Minute, "long": 2 * time.Hour, "taken-over": time.Minute} {
		if got := left(key); got > want || got < want-30*time.Second {
			t.Errorf("%q has %v left after the batch, want about %v", key, got, want)
		}
	}
	for _, key := range []string{"released", "broken"} {
		if got := left(key); got != 0 {
			t.Errorf("%q has %v left, want free", key, got)
		}
	}
	if got := left("expired"); got > 0 {
		t.Errorf("the expired lease was extended: %v left", got)
	}

	if errs := l.d.RenewBatch(ctx, nil); len(errs) != 0 {
		t.Errorf("RenewBatch(nil) = %v, want no answers", errs)
	}
}

// TestKeepaliveOnBatch: a Session's keepalive renews through the batch
// and keeps each lease's state: a renewed lease gets a later ValidUntil,
// and a lease the store refuses (broken) is lost, its handle's error
// reaching fence.ErrNotHeld.
func TestKeepaliveOnBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var stmts statements
	l := newTable(t, stmts.pool(t, 2))
	sess, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	a, err := sess.Lock(ctx, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sess.Lock(ctx, "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	first := a.Lease().ValidUntil
	if err := l.Break(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the keepalive did not lose the broken lease")
	}
	if err := b.Err(); !errors.Is(err, fence.ErrLeaseLost) || !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("the broken lease's handle: %v, want ErrLeaseLost for ErrNotHeld", err)
	}
	if err := a.Err(); err != nil {
		t.Fatalf("the held lease's handle: %v", err)
	}
	if !a.Lease().ValidUntil.After(first) {
		t.Errorf("the held lease is valid until %v, as when taken: not renewed", a.Lease().ValidUntil)
	}
	if _, by := stmts.count(); by["WITH r AS ("] == 0 {
		t.Errorf("the keepalive never sent the batch renewal: %v", by)
	}
	if err := a.Release(ctx); err != nil {
		t.Errorf("Release after renewals: %v", err)
	}
}
