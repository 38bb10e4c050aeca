package zookeeper

import (
	"encoding/binary"
	"errors"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// TestAcquireFreeKey: a store that saw a key's last record takes the key,
// once free, in the transaction that creates its lock node: the last
// record then names the lease's owner, and its mzxid is the token, which
// Inspect reports. A key another Locker holds is refused, naming the
// holder; a key another Locker took since is taken in one write too.
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
	// was held), then this one again.
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
	data, _, err = c.Get(l.d.lastPath("k"))
	if err != nil || string(data) != string(encodeLastHere(fourth.Owner)) {
		t.Errorf("last record %q, %v; want %q", data, err, encodeLastHere(fourth.Owner))
	}
}

// TestRenewBatch: one RenewBatch renews the leases still held and reports
// a broken one and a released one as not held, both with reads (a few
// leases) and with checks in multi-operations (many): a round of many
// leases all held is one multi-operation and no read.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	for _, n := range []int{4, checkMin + 8} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			servers := sharedServers(t)
			root := uniqueRoot("batch")
			var ops opCounter
			l := newTestLocker(t, connectCounting(t, servers, &ops), &Options{Root: root})
			other := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
			ctx := t.Context()
			var leases []fence.Lease
			for i := range n {
				lease, err := l.Acquire(ctx, "k"+strconv.Itoa(i), 5*time.Second, nil)
				if err != nil {
					t.Fatal(err)
				}
				leases = append(leases, lease)
			}
			if err := other.Break(ctx, "k1"); err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx, leases[2]); err != nil {
				t.Fatal(err)
			}
			errs := l.d.RenewBatch(ctx, leases)
			if len(errs) != len(leases) {
				t.Fatalf("%d errors for %d leases", len(errs), len(leases))
			}
			for i, err := range errs {
				want := map[int]string{1: "gone", 2: "released"}[i]
				switch {
				case want == "" && err != nil:
					t.Errorf("lease %s: %v; want renewed", leases[i].Key, err)
				case want != "" && (!errors.Is(err, fence.ErrNotHeld) || !strings.Contains(err.Error(), want)):
					t.Errorf("lease %s: %v; want fence.ErrNotHeld saying %q", leases[i].Key, err, want)
				}
			}
			held := append(leases[:1:1], leases[3:]...)
			before := ops.snapshot()
			for i, err := range l.d.RenewBatch(ctx, held) {
				if err != nil {
					t.Errorf("lease %s: %v; want renewed", held[i].Key, err)
				}
			}
			got := ops.since(before)
			if n >= checkMin && (got[opMulti] != 1 || got[opExists] != 0) {
				t.Errorf("a round of %d leases sent %d multi-operations and %d reads; want 1 and 0", len(held), got[opMulti], got[opExists])
			}
			if n < checkMin && (got[opMulti] != 0 || got[opExists] != len(held)) {
				t.Errorf("a round of %d leases sent %d multi-operations and %d reads; want 0 and %d", len(held), got[opMulti], got[opExists], len(held))
			}
		})
	}
}

// Opcodes of the ZooKeeper protocol that opCounter tells apart.
const (
	opExists = 3
	opMulti  = 14
)

// opCounter counts the requests a client sends, by opcode.
type opCounter struct {
	mu sync.Mutex
	n  map[int32]int
}

func (o *opCounter) add(op int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[int32]int{}
	}
	o.n[op]++
}

func (o *opCounter) snapshot() map[int32]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

// since returns the requests counted since before, a snapshot.
func (o *opCounter) since(before map[int32]int) map[int32]int {
	d := o.snapshot()
	for op, n := range before {
		d[op] -= n
	}
	return d
}

// opConn counts the requests written to a connection: after the session's
// handshake, each write is one request (length, xid, opcode, body).
type opConn struct {
	net.Conn
	ops *opCounter
}

func (c opConn) Write(p []byte) (int, error) {
	if len(p) >= 12 {
		c.ops.add(int32(binary.BigEndian.Uint32(p[8:12])))
	}
	return c.Conn.Write(p)
}

// connectCounting is connect, with the requests counted in ops.
func connectCounting(t testing.TB, servers string, ops *opCounter) *zk.Conn {
	t.Helper()
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return opConn{c, ops}, nil
	}
	c, events, err := zk.Connect(strings.Split(servers, ","), testSessionTimeout, zk.WithLogger(silent{}), zk.WithLogInfo(false), zk.WithDialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			go drain(events)
			return c
		}
	}
	t.Fatal("no session")
	return nil
}
