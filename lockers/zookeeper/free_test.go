package zookeeper

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestAcquireFreeKey: a store that saw a key's last record takes the key,
// once free, in the transaction that creates its lock node: the last
// record then names the lease's owner, and its mzxid is the token, which
// Inspect reports. A key another Locker holds is refused as before, and
// a last record another Locker wrote since is read again.
func TestAcquireFreeKey(t *testing.T) {
	t.Parallel()
	servers := sharedServers(t)
	root := uniqueRoot("free")
	c := connect(t, servers, testSessionTimeout)
	l := newTestLocker(t, c, &Options{Root: root})
	other := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	ctx := t.Context()

	first, err := l.Acquire(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := l.Acquire(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token <= first.Token {
		t.Errorf("token %d after %d", second.Token, first.Token)
	}
	data, st, err := c.Get(l.d.lastPath("k"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(encodeLastHere(second.Owner)) || st.Mzxid != int64(second.Token) {
		t.Errorf("last record %q, mzxid %d; want %q, mzxid %d (the token)", data, st.Mzxid, encodeLastHere(second.Owner), second.Token)
	}
	children, _, err := c.Children(l.d.lockPath("k"))
	if err != nil || len(children) != 1 {
		t.Fatalf("lock nodes %q, %v; want the holder's only", children, err)
	}
	_, node, err := c.Exists(l.d.lockPath("k") + "/" + children[0])
	if err != nil || node.Czxid != int64(second.Token) {
		t.Errorf("lock node czxid %v, %v; want the token %d", node, err, second.Token)
	}

	// Busy: the other Locker's try is refused with the holder named, and
	// so is a second try of this Locker.
	for _, x := range []testLocker{other, l} {
		_, err := x.Acquire(ctx, "k", time.Second, nil)
		held, ok := errors.AsType[*fence.HeldError](err)
		if !ok || held.Token != second.Token || held.Owner != second.Owner {
			t.Errorf("Acquire of a held key: %v; want a *fence.HeldError naming token %d", err, second.Token)
		}
	}
	if err := l.Release(ctx, second); err != nil {
		t.Fatal(err)
	}
	info, err := l.Inspect(ctx, "k")
	if err != nil || info.Held || info.Token != second.Token || info.Owner != second.Owner {
		t.Errorf("Inspect after release: %+v, %v; want free, last token %d", info, err, second.Token)
	}

	// The other Locker takes the key (it saw the record while the key
	// was held): the record this Locker saw is outdated, and its next
	// Acquire reads it again.
	third, err := other.Acquire(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Release(ctx, third); err != nil {
		t.Fatal(err)
	}
	fourth, err := l.Acquire(ctx, "k", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Token <= third.Token || third.Token <= second.Token {
		t.Errorf("tokens %d, %d, %d: not increasing", second.Token, third.Token, fourth.Token)
	}
	if err := l.Release(ctx, fourth); err != nil {
		t.Fatal(err)
	}
	info, err = other.Inspect(ctx, "k")
	if err != nil || info.Token != fourth.Token || info.Owner != fourth.Owner {
		t.Errorf("Inspect: %+v, %v; want last token %d", info, err, fourth.Token)
	}
}

// TestRenewBatch: one RenewBatch renews the leases still held and reports
// a broken one and a released one as not held.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	servers := sharedServers(t)
	root := uniqueRoot("batch")
	l := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	other := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	ctx := t.Context()
	var leases []fence.Lease
	for _, k := range []string{"a", "b", "c", "d"} {
		lease, err := l.Acquire(ctx, k, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	if err := other.Break(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, leases[2]); err != nil {
		t.Fatal(err)
	}
	errs := l.d.RenewBatch(ctx, leases)
	if len(errs) != len(leases) {
		t.Fatalf("%d errors for %d leases", len(errs), len(leases))
	}
	for i, want := range []string{"", "gone", "released", ""} {
		switch err := errs[i]; {
		case want == "" && err != nil:
			t.Errorf("lease %s: %v; want renewed", leases[i].Key, err)
		case want != "" && (!errors.Is(err, fence.ErrNotHeld) || !strings.Contains(err.Error(), want)):
			t.Errorf("lease %s: %v; want fence.ErrNotHeld saying %q", leases[i].Key, err, want)
		}
	}
}
