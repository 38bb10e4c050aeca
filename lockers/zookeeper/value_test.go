package zookeeper

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// heldNode returns a Locker of its own on the shared servers that holds
// key "k" with lease, and the path of that lease's lock node.
func heldNode(t *testing.T) (l testLocker, lease fence.Lease, path string) {
	t.Helper()
	l = newTestLocker(t, connect(t, sharedServers(t), testSessionTimeout), nil)
	lease, err := l.Acquire(t.Context(), "k", 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	children, _, err := l.d.c.Children(l.d.lockPath("k"))
	if err != nil || len(children) == 0 {
		t.Fatalf("Children(%s) = %v, %v; want a lock node", l.d.lockPath("k"), children, err)
	}
	sortChildren(children)
	return l, lease, l.d.lockPath("k") + "/" + children[0]
}

// TestCorruptNodeValue: a lock node whose data carries a value longer
// than fence.MaxValueLen is reported by Inspect with a
// *fence.CorruptError; the lease goes on.
func TestCorruptNodeValue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l, lease, path := heldNode(t)
	long := string(encodeNode(lease.Owner)) + "\x00" + strings.Repeat("v", fence.MaxValueLen+1)
	if _, err := l.d.c.Set(path, []byte(long), -1); err != nil {
		t.Fatal(err)
	}
	_, err := l.Inspect(ctx, "k")
	if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
		t.Fatalf("Inspect of a node with %d bytes of value: %v; want a *fence.CorruptError", fence.MaxValueLen+1, err)
	}
	if _, err := l.Renew(ctx, lease); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// TestPublishAfterVersionMoved: a lock node whose data version moved on
// since this Locker's last write (a Publish whose answer was lost, or a
// hand edit) is read again, and Publish sets the value; the node, its
// czxid (the token) and its session stay.
func TestPublishAfterVersionMoved(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l, lease, path := heldNode(t)
	if _, err := l.d.c.Set(path, encodeNodeValue(lease.Owner, "lost"), -1); err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(ctx, lease, "v"); err != nil {
		t.Fatalf("Publish after the version moved: %v", err)
	}
	data, st, err := l.d.c.Get(path)
	if err != nil || string(data) != string(encodeNodeValue(lease.Owner, "v")) || st.Czxid != int64(lease.Token) {
		t.Fatalf("the node after Publish: %q, czxid %d, %v; want the value v, czxid %d", data, st.Czxid, err, lease.Token)
	}
	if info, err := l.Inspect(ctx, "k"); err != nil || info.Value != "v" || info.Owner != lease.Owner {
		t.Fatalf("Inspect = %+v, %v; want owner and value v", info, err)
	}
}

// TestAcquireAllRefusedByCuratorInLine: a lock path with a node in it (a
// Curator client's, here one created by hand) makes AcquireAll refuse
// the whole set with a *fence.HeldError for that key, and no other key
// of the set is taken or gets a token.
func TestAcquireAllRefusedByCuratorInLine(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn := connect(t, sharedServers(t), testSessionTimeout)
	l := newTestLocker(t, conn, nil)
	keys := []string{"a", "b", "c"}
	owners := []string{fence.NewOwnerID(), fence.NewOwnerID(), fence.NewOwnerID()}
	// Known keys (their paths seen) and a new one.
	for _, k := range keys[:2] {
		lease, err := l.Acquire(ctx, k, 5*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	before, err := l.Inspect(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(l.d.lockPath("b")+"/_c_curator-lock-", []byte("10.0.0.1"), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, err = l.d.AcquireAll(ctx, keys, owners, 5*time.Second)
	if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Key != "b" || !strings.Contains(he.Owner, "10.0.0.1") {
		t.Fatalf("AcquireAll with a Curator node in line on b: %v; want a *fence.HeldError for b naming it", err)
	}
	if info, err := l.Inspect(ctx, "a"); err != nil || info.Held || info.Token != before.Token {
		t.Fatalf("a after the refused AcquireAll: %+v, %v; want free with token %d", info, err, before.Token)
	}
	if info, err := l.Inspect(ctx, "c"); err != nil || info.Token != 0 {
		t.Fatalf("c after the refused AcquireAll: %+v, %v; want never taken", info, err)
	}
}

// TestAcquireAllStalled: with the server's answers held back mid
// AcquireAll, the call returns once its context ends; once the link
// heals, the keys are either all taken by the set's owners or none is.
func TestAcquireAllStalled(t *testing.T) {
	t.Parallel()
	servers := sharedServers(t)
	p := startProxy(t, servers)
	root := uniqueRoot("stall")
	l := newTestLocker(t, connect(t, p.Addr(), testSessionTimeout), &Options{Root: root})
	other := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	keys := []string{"a", "b", "c"}
	owners := []string{fence.NewOwnerID(), fence.NewOwnerID(), fence.NewOwnerID()}
	lease, err := l.Acquire(t.Context(), "a", 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	start := time.Now()
	_, err = l.d.AcquireAll(ctx, keys, owners, 5*time.Second)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AcquireAll with the server stalled: %v; want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("AcquireAll returned %v after it started; its context allowed 300ms", took)
	}
	p.Heal()
	var held int
	deadline := time.Now().Add(10 * time.Second)
	for {
		held = 0
		for i, k := range keys {
			info, err := other.Inspect(t.Context(), k)
			if err != nil {
				t.Fatal(err)
			}
			if info.Held {
				held++
				if info.Owner != owners[i] {
					t.Fatalf("%s is held by another owner than the set's", k)
				}
			}
		}
		if held == len(keys) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if held != 0 && held != len(keys) {
		t.Fatalf("%d of %d keys held after a stalled AcquireAll; want all or none", held, len(keys))
	}
	t.Logf("the stalled AcquireAll took %d of %d keys once the link healed", held, len(keys))
}

// TestPublishStalled: with the server's answers held back, Publish
// returns once its context ends.
func TestPublishStalled(t *testing.T) {
	t.Parallel()
	p := startProxy(t, sharedServers(t))
	l := newTestLocker(t, connect(t, p.Addr(), testSessionTimeout), nil)
	lease, err := l.Acquire(t.Context(), "k", 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Stall()
	defer p.Heal()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := l.Publish(ctx, lease, "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Publish with the server stalled: %v; want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Publish returned %v after it started; its context allowed 300ms", took)
	}
}
