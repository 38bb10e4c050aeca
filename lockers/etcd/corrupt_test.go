package etcd

import (
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
)

// TestCorruptLockRecord: a lock record that this package did not write (a
// value of another format, an empty owner, no lease) is reported by
// Acquire and Inspect with a *fence.CorruptError and never written over;
// Break removes it, and the key then works again with a higher token.
func TestCorruptLockRecord(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	for _, tt := range []struct {
		name, value string
		lease       bool
	}{
		{"garbage", "not a record", true},
		{"other version", "fence9:owner", true},
		{"empty owner", recordPrefix, true},
		{"NUL in owner", recordPrefix + "a\x00b", true},
		{"not UTF-8", recordPrefix + "\xff\xfe", true},
		{"empty value", "", true},
		{"no lease", encodeRecord("someone"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			l := newTestLocker(t, c, nil)
			key := "k"
			var opts []clientv3.OpOption
			if tt.lease {
				g, err := c.Grant(ctx, 60)
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, clientv3.WithLease(g.ID))
			}
			put, err := c.Put(ctx, l.d.held(key), tt.value, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Acquire(ctx, key, time.Minute, nil)
			wantCorrupt(t, err, "Acquire")
			_, err = l.Inspect(ctx, key)
			wantCorrupt(t, err, "Inspect")
			resp, err := c.Get(ctx, l.d.held(key))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != tt.value || resp.Kvs[0].ModRevision != put.Header.Revision {
				t.Fatalf("the corrupt record was written over: %v", resp.Kvs)
			}
			if err := l.Break(ctx, key); err != nil {
				t.Fatalf("Break of a corrupt record: %v", err)
			}
			lease, err := l.Acquire(ctx, key, time.Minute, nil)
			if err != nil {
				t.Fatalf("Acquire after Break: %v", err)
			}
			if lease.Token <= fence.Token(put.Header.Revision) {
				t.Errorf("token %d after Break, want above the corrupt record's revision %d", lease.Token, put.Header.Revision)
			}
			if err := l.Release(ctx, lease); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCorruptLockRecordOfHolder: a record that becomes corrupt while its
// holder holds it (same lease, same create revision, value rewritten by
// hand) makes Renew and Release fail with a *fence.CorruptError, and
// leaves it in place.
func TestCorruptLockRecordOfHolder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, l.d.held("k"), "garbage", clientv3.WithIgnoreLease()); err != nil {
		t.Fatal(err)
	}
	_, err = l.Renew(ctx, lease)
	wantCorrupt(t, err, "Renew")
	wantCorrupt(t, l.Release(ctx, lease), "Release")
	resp, err := c.Get(ctx, l.d.held("k"))
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "garbage" {
		t.Fatalf("the corrupt record was removed or written over: %v %v", resp, err)
	}
}

// TestCorruptLastRecord: a last record of another format, or attached to
// a lease, is reported by Inspect of the free key with a
// *fence.CorruptError. (Acquire does not read it and writes it anew.)
func TestCorruptLastRecord(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	for _, tt := range []struct {
		name, value string
		lease       bool
	}{
		{"garbage", "garbage", false},
		{"leased", encodeRecord("someone"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			l := newTestLocker(t, c, nil)
			var opts []clientv3.OpOption
			if tt.lease {
				g, err := c.Grant(ctx, 60)
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, clientv3.WithLease(g.ID))
			}
			if _, err := c.Put(ctx, l.d.last("k"), tt.value, opts...); err != nil {
				t.Fatal(err)
			}
			_, err := l.Inspect(ctx, "k")
			wantCorrupt(t, err, "Inspect")
		})
	}
}

// TestServerRaisesTTL: a Locker told that the server grants 1 s leases,
// on a server that grants no less than 3 s (an election timeout of
// 1.5 s), refuses a 1 s Acquire with fence.ErrInvalid instead of holding
// the key longer than asked (a 1 s TTL takes a shared lease of 2 s, the
// TTL and slack), and leaves the key free. On a server that grants 2 s,
// the 1 s Acquire is taken.
func TestServerRaisesTTL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ms := startClusterElection(t, 1, "1500")
	l := newTestLocker(t, newClient(t, endpointsOf(ms)), &Options{MinTTL: time.Second})
	_, err := l.Acquire(ctx, "k", time.Second, nil)
	if !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Acquire of 1 s on a server whose least lease is 3 s: %v; want an error matching fence.ErrInvalid", err)
	}
	t.Logf("error: %v", err)
	info, err := l.Inspect(ctx, "k")
	if err != nil || info.Held || info.Token != 0 {
		t.Fatalf("Inspect after the refused Acquire = %+v, %v; want a key never acquired", info, err)
	}
	shared := newTestLocker(t, sharedClient(t), &Options{MinTTL: time.Second})
	lease, err := shared.Acquire(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatalf("Acquire of 1 s on a server whose least lease is 2 s: %v", err)
	}
	if err := shared.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
}

func wantCorrupt(t *testing.T, err error, call string) {
	t.Helper()
	if !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("%s of a corrupt record: %v; want an error matching fence.ErrCorrupt", call, err)
	}
	if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
		t.Fatalf("%s of a corrupt record: %v (%T); want a *fence.CorruptError", call, err, err)
	}
}
