package postgres

import (
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
			l.QuotedTable()+` WHERE key = $1`, key).Scan(&us)
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

// TestRenewManyOnBatch: the portable layer's RenewMany goes through the
// batch and keeps each lease's state: renewed leases come back with a
// later ValidUntil, and a lease refused by the store is forgotten, so a
// later Release of it is refused locally.
func TestRenewManyOnBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTable(t, newPool(t, 2, nil))
	a, err := l.Acquire(ctx, "a", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Acquire(ctx, "b", 10*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Break(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	renewed, errs := l.RenewMany(ctx, []fence.Lease{a, b})
	if errs[0] != nil {
		t.Fatalf("RenewMany of a held lease: %v", errs[0])
	}
	if renewed[0].Token != a.Token || !renewed[0].ValidUntil.After(a.ValidUntil) {
		t.Errorf("renewed lease %+v, want token %d valid after %v", renewed[0], a.Token, a.ValidUntil)
	}
	if !errors.Is(errs[1], fence.ErrNotHeld) {
		t.Errorf("RenewMany of a broken lease: %v, want ErrNotHeld", errs[1])
	}
	if err := l.Release(ctx, a); err != nil {
		t.Errorf("Release with the first copy after RenewMany: %v", err)
	}
}
