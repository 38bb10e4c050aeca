package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// statements counts the statements a pool sends: the client's packets
// that start a command and are a query (COM_QUERY) or the execution of a
// prepared statement (COM_STMT_EXECUTE).
type statements struct{ n, prepares atomic.Int64 }

// pool opens the test server with a pool of at most maxConns connections
// whose statements s counts.
func (s *statements) pool(t testing.TB, maxConns int) *sql.DB {
	t.Helper()
	cfg, err := mysqldrv.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatalf("ParseDSN: %v", err)
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, s}, nil
	}
	conn, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	t.Cleanup(func() { db.Close() })
	return db
}

func (s *statements) count() int64 { return s.n.Load() }

type countingConn struct {
	net.Conn
	s *statements
}

// Write sees one packet per call (the driver writes each packet whole):
// a 3-byte length, the sequence number (0 at a command's start), the
// command byte.
func (c countingConn) Write(p []byte) (int, error) {
	if len(p) > 4 && p[3] == 0 && (p[4] == 0x03 || p[4] == 0x17) {
		c.s.n.Add(1)
	}
	if len(p) > 4 && p[3] == 0 && p[4] == 0x16 { // COM_STMT_PREPARE
		c.s.prepares.Add(1)
	}
	return c.Conn.Write(p)
}

// TestRenewBatch renews, in one statement per TTL (three here), leases
// in every state a keepalive meets: held (with two TTLs, one given twice), expired on
// the server, released, broken, taken over after expiry, and never
// issued. Only the held ones are extended, each by its own TTL.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var stmts statements
	db := stmts.pool(t, 2)
	l := newTable(t, db)
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
	missing := fence.Lease{Key: "never-acquired", Owner: short.Owner, Token: 3, TTL: time.Minute}

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
		{"row missing", missing, false},
	}
	leases := make([]fence.Lease, len(cases))
	for i, c := range cases {
		leases[i] = c.lease
	}
	before := stmts.count()
	errs := l.d.RenewBatch(ctx, leases)
	if n := stmts.count() - before; n != 3 {
		t.Errorf("RenewBatch of leases with three TTLs sent %d statements, want 3", n)
	}
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
	// others were not touched, and the missing row is free.
	left := func(key string) time.Duration {
		t.Helper()
		info, err := l.Inspect(ctx, key)
		if err != nil {
			t.Fatalf("Inspect %q: %v", key, err)
		}
		if !info.Held {
			return 0
		}
		return time.Until(info.ValidUntil)
	}
	for key, want := range map[string]time.Duration{"short": time.Minute, "long": 2 * time.Hour, "taken-over": time.Minute} {
		if got := left(key); got > want || got < want-30*time.Second {
			t.Errorf("%q has %v left after the batch, want about %v", key, got, want)
		}
	}
	for _, key := range []string{"released", "broken", "expired", "never-acquired"} {
		if got := left(key); got != 0 {
			t.Errorf("%q has %v left, want free", key, got)
		}
	}
	if info, err := l.Inspect(ctx, "taken-over"); err != nil || info.Owner != successor.Owner || info.Token != successor.Token {
		t.Errorf("taken-over after the batch: %+v, %v; want the successor's", info, err)
	}
	if errs := l.d.RenewBatch(ctx, nil); len(errs) != 0 {
		t.Errorf("RenewBatch(nil) = %v, want no answers", errs)
	}
}

// TestRenewBatchStatements: the statements a batch renewal sends do not
// grow with the number of leases: one for 1, 100 and 1,000 leases.
func TestRenewBatchStatements(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var stmts statements
	l := newTable(t, stmts.pool(t, 2))
	var leases []fence.Lease
	for _, n := range []int{1, 100, 1000} {
		for i := len(leases); i < n; i++ {
			lease, err := l.Acquire(ctx, "n-"+strconv.Itoa(i), time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, lease)
		}
		before := stmts.count()
		errs := l.d.RenewBatch(ctx, leases)
		if got := stmts.count() - before; got != 1 {
			t.Errorf("%d leases: %d statements, want 1", n, got)
		}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%d leases: lease %d: %v", n, i, err)
			}
		}
	}
}

// TestKeepaliveOnBatch: a Session's keepalive renews through the batch:
// a renewed lease gets a later ValidUntil, a broken one is lost.
func TestKeepaliveOnBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTable(t, newDB(t, 2))
	sess, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	var hs []*fence.Handle
	for i := range 3 {
		h, err := sess.Lock(ctx, fmt.Sprint("k", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	first := hs[0].Lease().ValidUntil
	if err := l.Break(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hs[1].Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the keepalive did not lose the broken lease")
	}
	if err := hs[1].Err(); !errors.Is(err, fence.ErrLeaseLost) || !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("the broken lease's handle: %v, want ErrLeaseLost for ErrNotHeld", err)
	}
	for _, i := range []int{0, 2} {
		if err := hs[i].Err(); err != nil {
			t.Fatalf("held lease %d: %v", i, err)
		}
	}
	if !hs[0].Lease().ValidUntil.After(first) {
		t.Errorf("the held lease is valid until %v, as when taken: not renewed", hs[0].Lease().ValidUntil)
	}
	for _, i := range []int{0, 2} {
		if err := hs[i].Release(ctx); err != nil {
			t.Errorf("Release after renewals: %v", err)
		}
	}
}

// TestPreparedOnce: once the Locker's statements are prepared, its calls
// send no more prepares, one statement each.
func TestPreparedOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var stmts statements
	l := newTable(t, stmts.pool(t, 1))
	cycle := func() {
		t.Helper()
		lease, err := l.Acquire(ctx, "prepared", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lease, err = l.Renew(ctx, lease); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Inspect(ctx, "prepared"); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // the first calls prepare in the background
	eventually(t, "the statements were not prepared", func() bool {
		l.d.prep.mu.Lock()
		defer l.d.prep.mu.Unlock()
		return len(l.d.prep.stmts) == 4 && len(l.d.prep.pending) == 0
	})
	cycle() // each statement is prepared on the pool's one connection
	prepares, sent := stmts.prepares.Load(), stmts.count()
	for range 5 {
		cycle()
	}
	if n := stmts.prepares.Load() - prepares; n != 0 {
		t.Errorf("5 cycles sent %d prepares, want 0", n)
	}
	if n := stmts.count() - sent; n != 20 {
		t.Errorf("5 cycles of 4 calls sent %d statements, want 20", n)
	}
}
