package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// The shared server grants leases of at least 2 s: the tests take leases
// of that TTL (a shared etcd lease of 3 s) and outlive several of them.
const shortTTL = DefaultMinTTL

// requests counts the gRPC requests a client sends: unary calls, and
// messages sent on streams; streams counts the streams opened.
type requests struct {
	unary, sent, streams atomic.Int64
}

func (r *requests) total() int64 { return r.unary.Load() + r.sent.Load() }

// countedStream counts the messages sent on a stream.
type countedStream struct {
	grpc.ClientStream
	r *requests
}

func (s countedStream) SendMsg(m any) error {
	s.r.sent.Add(1)
	return s.ClientStream.SendMsg(m)
}

// countingClient connects to the shared server and counts in r the
// requests sent through it.
func countingClient(t testing.TB, r *requests) *clientv3.Client {
	t.Helper()
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		r.unary.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		r.streams.Add(1)
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return countedStream{s, r}, nil
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(sharedEndpoints(t), ","),
		DialTimeout: 5 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)},
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// leaseOf returns the etcd lease key's lock record is attached to.
func leaseOf(t testing.TB, c *clientv3.Client, l testLocker, key string) clientv3.LeaseID {
	t.Helper()
	resp, err := c.Get(context.Background(), l.d.held(key))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get(%q) = %v, %v; want the lock record", l.d.held(key), resp, err)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// acquireMany takes n keys named prefix0, prefix1, ... on l, 16 at a time.
func acquireMany(t testing.TB, l *fence.Locker, prefix string, n int, ttl time.Duration) []fence.Lease {
	t.Helper()
	leases := make([]fence.Lease, n)
	errs := make(chan error, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range min(16, n) {
		go func() {
			for i := range next {
				var err error
				leases[i], err = l.Acquire(context.Background(), fmt.Sprint(prefix, i), ttl, nil)
				errs <- err
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return leases
}

// TestSharedLease: the records a Locker creates with one TTL (in whole
// seconds) are attached to one etcd lease of that TTL and slack; another
// TTL gets another; a record released or broken is deleted and the
// shared lease stays, with the other records held.
func TestSharedLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	operator := newTestLocker(t, c, &Options{Prefix: l.d.prefix})
	leases := acquireMany(t, l.Locker, "k", 4, time.Minute)
	id := leaseOf(t, c, l, "k0")
	for i := range leases {
		if got := leaseOf(t, c, l, leases[i].Key); got != id {
			t.Fatalf("%s is attached to lease %x, k0 to %x; want one shared lease", leases[i].Key, got, id)
		}
	}
	ttl, err := c.TimeToLive(ctx, id)
	if err != nil || ttl.GrantedTTL != 60+slack {
		t.Fatalf("the shared lease: %+v, %v; want %d s granted", ttl, err, 60+slack)
	}
	other, err := l.Acquire(ctx, "other-ttl", 2*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if leaseOf(t, c, l, "other-ttl") == id {
		t.Error("a record of another TTL is attached to the same etcd lease")
	}
	if err := l.Release(ctx, leases[0]); err != nil {
		t.Fatal(err)
	}
	if err := operator.Break(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	ttl, err = c.TimeToLive(ctx, id, clientv3.WithAttachedKeys())
	if err != nil || ttl.TTL <= 0 {
		t.Fatalf("the shared lease after a Release and a Break: %+v, %v; want it alive", ttl, err)
	}
	var attached []string
	for _, k := range ttl.Keys {
		attached = append(attached, string(k))
	}
	if want := []string{l.d.held("k2"), l.d.held("k3")}; fmt.Sprint(attached) != fmt.Sprint(want) && fmt.Sprint(attached) != fmt.Sprint([]string{want[1], want[0]}) {
		t.Errorf("the shared lease holds %q; want %q", attached, want)
	}
	errs := l.d.RenewBatch(ctx, leases)
	for i, err := range errs {
		if gone := i < 2; gone != errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("renewal of %s: %v", leases[i].Key, err)
		}
	}
	for _, lease := range append(leases[2:], other) {
		if err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUnrenewedRecordEnds: a record nobody renews ends within its TTL
// and a second, although its shared etcd lease lives on for the records
// that are renewed: a lease whose renewals stopped (a
// handle its Session declared lost) and a bare Acquire never renewed,
// beside a Session's handle and a lease renewed by hand. Those stay held
// for several TTLs.
func TestUnrenewedRecordEnds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	observer := newTestLocker(t, sharedClient(t), &Options{Prefix: l.d.prefix})
	s := waittest.NewSession(t, l.Locker, &fence.SessionOptions{TTL: shortTTL})
	h, err := s.Lock(ctx, "session", nil)
	if err != nil {
		t.Fatal(err)
	}
	leases := acquireMany(t, l.Locker, "k", 2, shortTTL) // k0 renewed, k1 not
	bare, err := l.Acquire(ctx, "bare", shortTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := leaseOf(t, c, l, "session")
	for _, k := range []string{"k0", "k1", "bare"} {
		if leaseOf(t, c, l, k) != id {
			t.Fatalf("%s is not on the shared lease of the session's handle", k)
		}
	}
	renewed := leases[0]
	// Every unrenewed record was acquired before now: it is gone one TTL
	// and expireMargin later, then checked again at the end.
	unrenewed := []fence.Lease{leases[1], bare}
	checkAt := time.Now().Add(shortTTL + expireMargin)
	checked := false
	wantFree := func(when string) {
		for _, lease := range unrenewed {
			info, err := observer.Inspect(ctx, lease.Key)
			if err != nil || info.Held {
				t.Errorf("Inspect(%s) %s = %+v, %v; want free", lease.Key, when, info, err)
			}
		}
	}
	end := time.Now().Add(3 * shortTTL)
	for time.Now().Before(end) {
		time.Sleep(shortTTL / 3)
		if err := l.d.RenewBatch(ctx, []fence.Lease{renewed})[0]; err != nil {
			t.Fatalf("renewal of k0: %v", err)
		}
		if !checked && time.Now().After(checkAt) {
			checked = true
			wantFree("one TTL and a second after its acquisition")
		}
	}
	wantFree("three TTLs after its acquisition")
	for _, lease := range []fence.Lease{renewed, h.Lease()} {
		info, err := observer.Inspect(ctx, lease.Key)
		if err != nil || !info.Held || info.Token != lease.Token {
			t.Errorf("Inspect(%s), renewed for three TTLs = %+v, %v; want held with token %d", lease.Key, info, err, lease.Token)
		}
	}
	select {
	case <-h.Done():
		t.Fatalf("the session's handle ended: %v", h.Err())
	default:
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCrashEndsAll: the records of a Locker whose process stops (its
// client closed: no keepalives, no sweeps) all end with the shared etcd
// lease, within its TTL and slack.
func TestCrashEndsAll(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	crashed := newClient(t, sharedEndpoints(t))
	l := newTestLocker(t, crashed, nil)
	observer := newTestLocker(t, sharedClient(t), &Options{Prefix: l.d.prefix})
	leases := acquireMany(t, l.Locker, "k", 3, shortTTL)
	if errs := l.d.RenewBatch(ctx, leases); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	_ = crashed.Close()
	time.Sleep(shortTTL + slack*time.Second + expireMargin)
	for _, lease := range leases {
		info, err := observer.Inspect(ctx, lease.Key)
		if err != nil || info.Held || info.Token != lease.Token {
			t.Errorf("Inspect(%s) after the TTL and slack = %+v, %v; want free, last token %d", lease.Key, info, err, lease.Token)
		}
	}
}

// TestRenewRequests: a RenewBatch of the leases a Locker acquired sends
// the same few requests for 1, 100 and 1,000 leases: a keepalive of the
// shared lease (a stream and a message) and one check (a unary call).
func TestRenewRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var r requests
	l := newTestLocker(t, countingClient(t, &r), nil)
	var counts []int64
	for _, n := range []int{1, 100, 1000} {
		leases := acquireMany(t, l.Locker, fmt.Sprint("n", n, "-"), n, time.Minute)
		before, streams := r.total(), r.streams.Load()
		errs := l.d.RenewBatch(ctx, leases)
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("RenewBatch of %d leases: %v", n, err)
		}
		got := r.total() - before
		t.Logf("RenewBatch of %d leases: %d requests, %d streams opened", n, got, r.streams.Load()-streams)
		counts = append(counts, got)
	}
	if counts[0] > 3 || counts[1] != counts[0] || counts[2] != counts[0] {
		t.Errorf("requests of a RenewBatch of 1, 100, 1000 leases: %v; want the same, at most 3", counts)
	}
}

// TestRenewThroughAnotherLocker: a lease renewed through a Locker that
// did not acquire it is moved to that Locker's shared etcd lease with
// its token, so that it stays held after its acquirer stopped, and its
// renewals do not keep the acquirer's other records alive.
func TestRenewThroughAnotherLocker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	crashed := newClient(t, sharedEndpoints(t))
	a := newTestLocker(t, crashed, nil)
	bc := sharedClient(t)
	b := newTestLocker(t, bc, &Options{Prefix: a.d.prefix})
	leases := acquireMany(t, a.Locker, "k", 2, shortTTL) // k0 renewed by b, k1 not
	if err := b.d.RenewBatch(ctx, leases[:1])[0]; err != nil {
		t.Fatalf("renewal through another Locker: %v", err)
	}
	if id, mine := leaseOf(t, bc, b, "k0"), leaseOf(t, bc, b, "k1"); id == mine {
		t.Fatal("the renewal through another Locker left the record on its acquirer's lease")
	}
	_ = crashed.Close()
	end := time.Now().Add(3 * shortTTL)
	for time.Now().Before(end) {
		time.Sleep(shortTTL / 3)
		if err := b.d.RenewBatch(ctx, leases[:1])[0]; err != nil {
			t.Fatalf("renewal of k0: %v", err)
		}
	}
	if info, err := b.Inspect(ctx, "k0"); err != nil || !info.Held || info.Token != leases[0].Token {
		t.Errorf("Inspect(k0), renewed through another Locker = %+v, %v; want held with token %d", info, err, leases[0].Token)
	}
	if info, err := b.Inspect(ctx, "k1"); err != nil || info.Held {
		t.Errorf("Inspect(k1), on the shared lease of a stopped Locker = %+v, %v; want free", info, err)
	}
	if err := b.d.Release(ctx, leases[0]); err != nil {
		t.Fatal(err)
	}
}

// TestLostAnswerRecordEnds: a record an Acquire may have created but
// whose answer was lost (here: written by hand on the shared lease, the
// Locker told the outcome is unknown) is deleted once its TTL has passed,
// while the shared lease is renewed for another record.
func TestLostAnswerRecordEnds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	renewed, err := l.Acquire(ctx, "renewed", shortTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := l.d.groupLease(ctx, seconds(shortTTL))
	if err != nil {
		t.Fatal(err)
	}
	owner := fence.NewOwnerID()
	r := l.d.shared.begin("lost", owner, id)
	value := encodeRecord(owner)
	if _, err := c.Txn(ctx).Then(clientv3.OpPut(l.d.held("lost"), value, clientv3.WithLease(clientv3.LeaseID(id))), clientv3.OpPut(l.d.last("lost"), value)).Commit(); err != nil {
		t.Fatal(err)
	}
	l.d.shared.end("lost", r, lost(owner, id, time.Now().Add(shortTTL)))
	end := time.Now().Add(3 * shortTTL)
	for time.Now().Before(end) {
		time.Sleep(shortTTL / 3)
		if err := l.d.RenewBatch(ctx, []fence.Lease{renewed})[0]; err != nil {
			t.Fatalf("renewal: %v", err)
		}
	}
	if info, err := l.Inspect(ctx, "lost"); err != nil || info.Held {
		t.Errorf("Inspect(lost) three TTLs after the lost Acquire = %+v, %v; want free", info, err)
	}
	if err := l.d.Release(ctx, renewed); err != nil {
		t.Fatal(err)
	}
}
