package zookeeper

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// TestSessionExpiryLosesLease cuts a holder's client off its server (a
// proxy closes its connections and refuses new ones) while a fence.Session
// renews its lease. Its renewals fail, its handle is lost at the end of
// its last renewal, before the server expires its session; a waiter gets
// the key once the server has, not before the holder's lease ran out.
// Once the network heals, the holder's client has a new session, its old
// lock node is gone, and its lease cannot be renewed.
func TestSessionExpiryLosesLease(t *testing.T) {
	t.Parallel()
	const session = 3 * time.Second
	const ttl = 2 * time.Second
	servers := sharedServers(t)
	p := startProxy(t, servers)
	root := uniqueRoot("expiry")
	conn := connect(t, p.Addr(), session)
	holder := newTestLocker(t, conn, &Options{Root: root, SessionTimeout: session})
	other := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	before := conn.SessionID()

	s := waittest.NewSession(t, holder.Locker, &fence.SessionOptions{TTL: ttl})
	h, err := s.Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The holder keeps the key for several TTLs while connected.
	time.Sleep(3 * ttl)
	if err := h.Err(); err != nil {
		t.Fatalf("the handle was lost while connected: %v", err)
	}
	result, _ := waittest.StartLock(t, other.Locker, "k", fence.SessionOptions{TTL: ttl, PollInterval: time.Hour})
	lease := h.Lease()
	cut := time.Now()
	p.Cut()
	rctx, cancel := context.WithTimeout(t.Context(), ttl/2)
	_, err = holder.Renew(rctx, lease)
	cancel()
	if err == nil {
		t.Errorf("Renew succeeded with the client cut off its server")
	}
	select {
	case <-h.Done():
	case <-time.After(2 * ttl):
		t.Fatalf("the handle still holds %v after the cut", 2*ttl)
	}
	if !errors.Is(h.Err(), fence.ErrLeaseLost) {
		t.Errorf("handle's error %v; want fence.ErrLeaseLost", h.Err())
	}
	t.Logf("handle lost %v after the cut: %v", time.Since(cut), h.Err())
	r := waittest.Wait(t, result, session+waittest.WakeBound)
	if r.At.Before(h.Lease().ValidUntil) {
		t.Errorf("the waiter got the key at %v, before the holder's lease ran out at %v", r.At, h.Lease().ValidUntil)
	}
	if r.Handle.Token() <= h.Token() {
		t.Errorf("waiter's token %d, want above the holder's %d", r.Handle.Token(), h.Token())
	}
	t.Logf("the waiter got the key %v after the cut", r.At.Sub(cut))

	p.Heal()
	deadline := time.Now().Add(waittest.WakeBound)
	for conn.SessionID() == before || conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatalf("no new session %v after the network healed (state %v)", waittest.WakeBound, conn.State())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := holder.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Renew after the session expired: %v; want fence.ErrNotHeld", err)
	}
	children, _, err := conn.Children(holder.d.lockPath("k"))
	if err != nil || len(children) != 1 {
		t.Fatalf("lock nodes %q, %v; want only the waiter's", children, err)
	}
	info, err := holder.Inspect(t.Context(), "k")
	if err != nil || info.Token != r.Handle.Token() || info.Owner != r.Handle.Lease().Owner {
		t.Errorf("Inspect = %+v, %v; want the waiter holding", info, err)
	}
}

// TestCancelledAcquire: an Acquire whose ctx ends returns at once with an
// error wrapping ctx.Err(); the request goes on, and a lease it won is
// found by Inspect and expires after its TTL unless renewed.
func TestCancelledAcquire(t *testing.T) {
	t.Parallel()
	servers := sharedServers(t)
	p := startProxy(t, servers)
	root := uniqueRoot("cancel")
	conn := connect(t, p.Addr(), testSessionTimeout)
	l := newTestLocker(t, conn, &Options{Root: root})
	other := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Acquire(ctx, "k", time.Second, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled ctx: %v; want context.Canceled", err)
	}
	// A call in flight when ctx ends: the proxy holds the request.
	p.Stall()
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	start := time.Now()
	_, err := l.Acquire(ctx, "k", time.Second, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire cut off its server: %v; want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Acquire returned %v after its ctx ended; want at once", took)
	}
	p.Heal()
	// The request went on: the abandoned Acquire won the key, whose lease
	// runs out after its TTL (from the send time, which the stall used
	// up) since nobody renews it.
	var info fence.LockInfo
	for end := time.Now().Add(waittest.WakeBound); ; time.Sleep(100 * time.Millisecond) {
		info, err = other.Inspect(t.Context(), "k")
		if err != nil || info.Token != 0 || time.Now().After(end) {
			break
		}
	}
	if err != nil || info.Token == 0 {
		t.Fatalf("Inspect after the stall = %+v, %v; want the abandoned Acquire's lease", info, err)
	}
	time.Sleep(time.Second + expireMargin)
	lease, err := other.Acquire(t.Context(), "k", time.Second, nil)
	if err != nil {
		t.Fatalf("Acquire after the abandoned lease's TTL: %v", err)
	}
	_ = other.Release(t.Context(), lease)
}
