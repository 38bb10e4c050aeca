package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/netfault"
	"github.com/fencekit/fence/internal/testing/valuetest"
)

// TestCorruptValueRecord: a value record this package did not write is
// reported by Inspect of the held key with a *fence.CorruptError; the
// lease itself goes on (Renew, Release), and Publish writes over it.
func TestCorruptValueRecord(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	for _, tt := range []struct{ name, value string }{
		{"garbage", "not a record"},
		{"no token", recordPrefix + ":v"},
		{"token 0", recordPrefix + "0:v"},
		{"leading zero", recordPrefix + "01:v"},
		{"no colon", recordPrefix + "12"},
		{"too long", recordPrefix + "1:" + string(make([]byte, fence.MaxValueLen+1))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			l := newTestLocker(t, c, nil)
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Put(ctx, l.d.value("k"), tt.value); err != nil {
				t.Fatal(err)
			}
			valuetest.CorruptValue(t, l.Locker, lease)
		})
	}
}

// TestPublishKeepsRecord: Publish keeps the lock record's create
// revision (the token) and its etcd lease, and a value record of an
// earlier token is not reported.
func TestPublishKeepsRecord(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := leaseOf(t, c, l, "k")
	if err := l.Publish(ctx, lease, "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(ctx, l.d.held("k"))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get = %v, %v", resp, err)
	}
	if kv := resp.Kvs[0]; kv.CreateRevision != int64(lease.Token) || clientv3.LeaseID(kv.Lease) != before || string(kv.Value) != encodeRecord(lease.Owner) {
		t.Fatalf("after Publish the lock record is %+v; want create revision %d, lease %x, value %q", kv, lease.Token, before, encodeRecord(lease.Owner))
	}
	// A value record left by an earlier lease of the key.
	if _, err := c.Put(ctx, l.d.value("k"), encodeValue(lease.Token-1, "old")); err != nil {
		t.Fatal(err)
	}
	if info, err := l.Inspect(ctx, "k"); err != nil || info.Value != "" || !info.Held {
		t.Fatalf("Inspect with a value record of token %d = %+v, %v; want held, no value", lease.Token-1, info, err)
	}
}

// TestAcquireAllOneTransaction: AcquireAll of 2, 8 and MaxMultiKeys keys
// sends one request (its transaction) once the shared lease is granted,
// and one more for a busy set (the holder's lease time to live).
func TestAcquireAllOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var r requests
	l := newTestLocker(t, countingClient(t, &r), nil)
	other := newTestLocker(t, sharedClient(t), &Options{Prefix: l.d.prefix})
	for _, n := range []int{2, 8, MaxMultiKeys} {
		keys, owners := make([]string, n), make([]string, n)
		for i := range keys {
			keys[i], owners[i] = fmt.Sprintf("n%d-%03d", n, i), fence.NewOwnerID()
		}
		// The shared lease granted (and fresh): by an Acquire.
		warm, err := l.Acquire(ctx, fmt.Sprint("warm", n), 10*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := r.total()
		leases, err := l.d.AcquireAll(ctx, keys, owners, 10*time.Second)
		if err != nil {
			t.Fatalf("AcquireAll of %d keys: %v", n, err)
		}
		if got := r.total() - before; got != 1 {
			t.Errorf("AcquireAll of %d keys sent %d requests; want 1", n, got)
		}
		for i, lease := range leases {
			if lease.Token != leases[0].Token || lease.Key != keys[i] {
				t.Fatalf("lease %d = %+v; want key %q, the transaction's token %d", i, lease, keys[i], leases[0].Token)
			}
			info, err := other.Inspect(ctx, keys[i])
			if err != nil || !info.Held || info.Token != lease.Token || info.Owner != owners[i] {
				t.Fatalf("Inspect(%q) = %+v, %v; want held by owner %d with token %d", keys[i], info, err, i, lease.Token)
			}
		}
		before = r.total()
		_, err = l.d.AcquireAll(ctx, keys, owners, 10*time.Second)
		var he *fence.HeldError
		if !errors.As(err, &he) || he.Key != keys[0] || he.Token != leases[0].Token {
			t.Fatalf("AcquireAll of held keys: %v; want a *fence.HeldError for %q", err, keys[0])
		}
		if got := r.total() - before; got != 2 {
			t.Errorf("a refused AcquireAll of %d keys sent %d requests; want 2 (the transaction, the holder's time to live)", n, got)
		}
		for _, lease := range append(leases, warm) {
			if err := l.d.Release(ctx, lease); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestAcquireAllTooManyKeys: AcquireAll of more than MaxMultiKeys keys
// is refused with errors.ErrUnsupported, writing nothing, and LockAll of
// that many then takes the keys one at a time.
func TestAcquireAllTooManyKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTestLocker(t, sharedClient(t), nil)
	n := MaxMultiKeys + 1
	keys, owners := make([]string, n), make([]string, n)
	for i := range keys {
		keys[i], owners[i] = fmt.Sprintf("k%03d", i), fence.NewOwnerID()
	}
	if _, err := l.d.AcquireAll(ctx, keys, owners, time.Minute); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("AcquireAll of %d keys: %v; want an error matching errors.ErrUnsupported", n, err)
	}
	if info, err := l.Inspect(ctx, keys[0]); err != nil || info.Token != 0 {
		t.Fatalf("Inspect after the refused AcquireAll = %+v, %v; want a key never taken", info, err)
	}
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: shortTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.WithoutCancel(ctx))
	hs, err := s.LockAll(ctx, keys, nil)
	if err != nil || len(hs) != n {
		t.Fatalf("LockAll of %d keys: %d handles, %v", n, len(hs), err)
	}
	for _, h := range hs {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHungServerPublishAndAcquireAll: against a server that accepts
// connections and never answers, Publish and AcquireAll return soon
// after their context ends, with an error matching it.
func TestHungServerPublishAndAcquireAll(t *testing.T) {
	t.Parallel()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{netfault.Hung(t).Addr}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := newTestLocker(t, c, nil)
	lease := fence.Lease{Key: "k", Owner: "o", Token: 7, TTL: time.Minute}
	for name, call := range map[string]func(context.Context) error{
		"Publish": func(ctx context.Context) error { return l.d.Publish(ctx, lease, "v") },
		"AcquireAll": func(ctx context.Context) error {
			_, err := l.d.AcquireAll(ctx, []string{"a", "b"}, []string{"o1", "o2"}, time.Minute)
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		elapsed := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s against a hung server: %v; want an error matching context.DeadlineExceeded", name, err)
		}
		if elapsed > 5*time.Second {
			t.Errorf("%s against a hung server returned after %v; its context allowed 500ms", name, elapsed)
		}
	}
}
