package postgres

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// listening returns the backend process id of l's listening connection,
// or 0 when none listens.
func listening(l *listener) uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil || l.cur.conn == nil {
		return 0
	}
	return l.cur.conn.PgConn().PID()
}

// twoLockers returns two Lockers on one lease table through two pools:
// the views of two processes. Their listeners stop when the test ends.
func twoLockers(t testing.TB) (a, b testLocker, poolA, poolB *pgxpool.Pool) {
	t.Helper()
	poolA, poolB = newPool(t, 4, nil), newPool(t, 4, nil)
	a = newTable(t, poolA)
	b = newTestLocker(t, poolB, &Options{Table: a.quotedTable()[1 : len(a.quotedTable())-1]})
	return a, b, poolA, poolB
}

// TestLockWokenByNotification: a Lock waiting through another Locker (on
// its own pool, as in another process) gets the key soon after the
// holder releases it, or an operator breaks it, without polling.
func TestLockWokenByNotification(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			a, b, _, _ := twoLockers(t)
			waittest.WokenByFree(t, a.Locker, b.Locker, how)
		})
	}
}

// TestNotifyReleaseActiveOnReturn: a release that happens right after
// NotifyRelease returned is heard.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a, b, _, _ := twoLockers(t)
	waittest.ActiveOnReturn(t, a.Locker, b.d)
}

// TestListenerReconnects: when the listening connection is killed, the
// listener reconnects, and a waiter that was listening still gets the
// key by notification after the holder releases it.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	a, b, poolA, _ := twoLockers(t)
	holder, err := waittest.NewSession(t, a.Locker, &fence.SessionOptions{TTL: time.Minute}).Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, busy := waittest.StartLock(t, b.Locker, "k", waittest.Waiting)
	pid := listening(b.d.ln)
	if pid == 0 {
		t.Fatal("no listening connection while a Lock waits")
	}
	mustExec(t, poolA, "SELECT pg_terminate_backend($1)", int32(pid))
	deadline := time.Now().Add(waittest.WakeBound)
	for {
		if p := listening(b.d.ln); p != 0 && p != pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener did not reconnect within %v", waittest.WakeBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The loss and the reconnection each made the waiter ask again.
	for busy.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the waiter did not ask again after the listener's loss (%d attempts)", busy.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let the waiter settle into its wait
	if err := holder.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := waittest.Wait(t, result, waittest.WakeBound)
	_ = r.Handle.Release(t.Context())
}

// TestNotifyReleaseOnConn: a Locker on a bare *pgx.Conn cannot listen, so
// NotifyRelease says so, and Lock waits by polling.
func TestNotifyReleaseOnConn(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2, nil)
	a := newTable(t, pool)
	conn, err := pgx.Connect(t.Context(), testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	b := newTestLocker(t, conn, &Options{Table: a.quotedTable()[1 : len(a.quotedTable())-1]})
	if _, _, err := b.d.NotifyRelease(t.Context(), "k"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("NotifyRelease on a *pgx.Conn: %v, want ErrUnsupported", err)
	}
	holder, err := waittest.NewSession(t, a.Locker, &fence.SessionOptions{TTL: time.Minute}).Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := waittest.StartLock(t, b.Locker, "k", fence.SessionOptions{TTL: time.Minute, PollInterval: 200 * time.Millisecond})
	if err := holder.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := waittest.Wait(t, result, waittest.WakeBound)
	_ = r.Handle.Release(t.Context())
}

// TestNotifyProtocol pins what another program sees on the channel: the
// freeing statements notify while someone holds the listening locks, with
// the md5 of the key as payload; a statement that frees nothing, or one
// with nobody listening, notifies nobody.
func TestNotifyProtocol(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 2, nil)
	l := newTable(t, pool)
	names := notifyNamesOf(l.quotedTable())
	if len(names.channel) > maxIdentLen {
		t.Fatalf("channel %q is longer than %d bytes", names.channel, maxIdentLen)
	}
	conn, err := pgx.Connect(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	sql := names.listenSQL()
	if _, err := conn.Exec(ctx, sql[0]); err != nil { // LISTEN only
		t.Fatal(err)
	}
	// next returns the payload of the next notification within wait, or
	// "" if none came.
	next := func(wait time.Duration) string {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		n, err := conn.WaitForNotification(wctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		if n.Channel != names.channel {
			t.Errorf("notification on %q, want %q", n.Channel, names.channel)
		}
		return n.Payload
	}
	md5hex := func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	cycle := func(key string) {
		t.Helper()
		lease, err := l.Acquire(ctx, key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}

	cycle("unheard")
	if p := next(300 * time.Millisecond); p != "" {
		t.Errorf("a release with no listening locks held notified %q", p)
	}

	if _, err := conn.Exec(ctx, sql[1]); err != nil { // the listening locks
		t.Fatal(err)
	}
	key := "clé/x"
	cycle(key)
	if p, want := next(waittest.WakeBound), md5hex(key); p != want {
		t.Errorf("release notified %q, want md5 %q", p, want)
	}
	var server string
	if err := pool.QueryRow(ctx, "SELECT md5(convert_to($1::text, 'UTF8'))", key).Scan(&server); err != nil || server != md5hex(key) {
		t.Errorf("the server's md5(convert_to(key, 'UTF8')) = %q, %v; want %q", server, err, md5hex(key))
	}

	if _, err := l.Acquire(ctx, "broken", time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Break(ctx, "broken"); err != nil {
		t.Fatal(err)
	}
	if p, want := next(waittest.WakeBound), md5hex("broken"); p != want {
		t.Errorf("break notified %q, want %q", p, want)
	}

	stale, err := l.Acquire(ctx, "stale", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Break(ctx, "stale"); err != nil {
		t.Fatal(err)
	}
	if p := next(waittest.WakeBound); p != md5hex("stale") {
		t.Fatalf("break notified %q", p)
	}
	if err := l.Release(ctx, stale); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Release of a broken lease: %v", err)
	}
	if err := l.Break(ctx, "stale"); err != nil {
		t.Fatal(err)
	}
	if p := next(300 * time.Millisecond); p != "" {
		t.Errorf("a refused release or a break of a free key notified %q", p)
	}
}

// TestListenerIdleAndClose: the listening connection closes once no one
// has waited for the idle time, opens again for the next wait, and closes
// with the Locker; NotifyRelease fails after Close.
func TestListenerIdleAndClose(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 2, nil)
	l := newTable(t, pool)
	l.d.ln.idle = 100 * time.Millisecond
	alive := func(pid uint32) bool {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", int32(pid)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	gone := func(pid uint32) {
		t.Helper()
		deadline := time.Now().Add(waittest.WakeBound)
		for listening(l.d.ln) != 0 || alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("listening connection %d still open", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	_, stop, err := l.d.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	pid := listening(l.d.ln)
	if pid == 0 || !alive(pid) {
		t.Fatal("no listening connection after NotifyRelease")
	}
	stop()
	stop() // twice is harmless
	gone(pid)

	_, _, err = l.d.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	pid = listening(l.d.ln)
	if pid == 0 {
		t.Fatal("no listening connection after a second NotifyRelease")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	gone(pid)
	if _, _, err := l.d.NotifyRelease(ctx, "k"); err == nil {
		t.Error("NotifyRelease after Close succeeded")
	}
	if _, err := l.Inspect(ctx, "k"); err != nil {
		t.Errorf("Inspect after Close: %v", err)
	}
}

// TestListenerBackoff: when the listening connection cannot be made,
// NotifyRelease fails, and until the next attempt is due it fails at once
// without trying; a Lock meanwhile waits by polling.
func TestListenerBackoff(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 2, nil)
	l := newTable(t, pool)
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr)
	_ = ln.Close() // a port that refuses connections
	l.d.ln.cfg.Host, l.d.ln.cfg.Port, l.d.ln.cfg.Fallbacks = closed.IP.String(), uint16(closed.Port), nil

	if _, _, err := l.d.NotifyRelease(ctx, "k"); err == nil {
		t.Fatal("NotifyRelease succeeded without a listening connection")
	}
	l.d.ln.mu.Lock()
	failures, retryAt := l.d.ln.failures, l.d.ln.retryAt
	l.d.ln.mu.Unlock()
	if failures != 1 || !retryAt.After(time.Now()) {
		t.Fatalf("after a failed connection: %d failures, next attempt at %v", failures, retryAt)
	}
	_, _, err = l.d.NotifyRelease(ctx, "k")
	if err == nil || !strings.Contains(err.Error(), "next attempt in") {
		t.Fatalf("NotifyRelease before the next attempt is due: %v", err)
	}
	time.Sleep(time.Until(retryAt))
	if _, _, err := l.d.NotifyRelease(ctx, "k"); err == nil {
		t.Fatal("NotifyRelease succeeded without a listening connection")
	}
	l.d.ln.mu.Lock()
	failures = l.d.ln.failures
	l.d.ln.mu.Unlock()
	if failures != 2 {
		t.Fatalf("%d failures after the second attempt, want 2", failures)
	}

	b, err := New(pool, &Options{Table: l.quotedTable()[1 : len(l.quotedTable())-1]})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := waittest.NewSession(t, b, &fence.SessionOptions{TTL: time.Minute}).Lock(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := waittest.StartLock(t, l.Locker, "k", fence.SessionOptions{TTL: time.Minute, PollInterval: 200 * time.Millisecond})
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := waittest.Wait(t, result, waittest.WakeBound)
	_ = r.Handle.Release(ctx)
}
