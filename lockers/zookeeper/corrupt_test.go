package zookeeper

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// TestCorruptLastRecord: a last record holding garbage makes Inspect and
// Acquire fail with a *fence.CorruptError; the record is not overwritten
// and Acquire leaves no lock node behind.
func TestCorruptLastRecord(t *testing.T) {
	t.Parallel()
	c := connect(t, sharedServers(t), testSessionTimeout)
	for _, tt := range []struct{ name, data string }{
		{"Garbage", "\x00\xffnot a record"},
		{"Empty", ""},
		{"NoOwner", lastMagic + "12"},
		{"TokenZero", lastMagic + "0 owner"},
		{"TokenNotANumber", lastMagic + "x12 owner"},
		{"OwnerNotUTF8", lastMagic + "12 \xff"},
		// Above every czxid the server will issue for a long time: the
		// record lies, or the ensemble was rebuilt with a new history.
		{"TokenFromTheFuture", lastMagic + "9223372036854775807 owner"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newTestLocker(t, c, nil)
			ctx := t.Context()
			if err := l.d.makePath(l.d.root + "/.last"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(l.d.lastPath("k"), []byte(tt.data), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if tt.name != "TokenFromTheFuture" {
				_, err := l.Inspect(ctx, "k")
				if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
					t.Errorf("Inspect: %v; want a *fence.CorruptError", err)
				}
			}
			_, err := l.Acquire(ctx, "k", time.Second, nil)
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Errorf("Acquire: %v; want a *fence.CorruptError", err)
			}
			t.Logf("Acquire: %v", err)
			data, _, err := c.Get(l.d.lastPath("k"))
			if err != nil || !bytes.Equal(data, []byte(tt.data)) {
				t.Errorf("last record after Acquire: %q, %v; want %q untouched", data, err, tt.data)
			}
			children, _, err := c.Children(l.d.lockPath("k"))
			if err != nil || len(children) != 0 {
				t.Errorf("lock nodes after the failed Acquire: %q, %v; want none", children, err)
			}
		})
	}
}

// TestCorruptHolderNode: a lock node whose data starts as this package's
// but does not parse is a *fence.CorruptError for Inspect and for an
// Acquire that finds it holding; a node of another client (Curator writes
// an IP address; any bytes will do) is a holder with a readable owner.
func TestCorruptHolderNode(t *testing.T) {
	t.Parallel()
	c := connect(t, sharedServers(t), testSessionTimeout)
	for _, tt := range []struct {
		name, data string
		corrupt    bool
	}{
		{"EmptyOwner", nodeMagic, true},
		{"OtherVersion", "fence/2 owner x", true},
		{"OwnerNotUTF8", nodeMagic + "\xff", true},
		{"CuratorAddress", "10.1.2.3", false},
		{"Binary", "\x00\x01\x02", false},
		{"NoData", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newTestLocker(t, c, nil)
			ctx := t.Context()
			if err := l.d.makePath(l.d.lockPath("k")); err != nil {
				t.Fatal(err)
			}
			path, err := c.Create(l.d.lockPath("k")+"/"+newNodePrefix(), []byte(tt.data), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Fatal(err)
			}
			_, st, err := c.Exists(path)
			if err != nil {
				t.Fatal(err)
			}
			info, ierr := l.Inspect(ctx, "k")
			_, aerr := l.Acquire(ctx, "k", time.Second, nil)
			if tt.corrupt {
				if _, ok := errors.AsType[*fence.CorruptError](ierr); !ok {
					t.Errorf("Inspect: %+v, %v; want a *fence.CorruptError", info, ierr)
				}
				if _, ok := errors.AsType[*fence.CorruptError](aerr); !ok {
					t.Errorf("Acquire: %v; want a *fence.CorruptError", aerr)
				}
			} else {
				if ierr != nil || !info.Held || info.Token != fence.Token(st.Czxid) || !strings.Contains(info.Owner, "zookeeper node _c_") {
					t.Errorf("Inspect: %+v, %v; want held by the foreign node with token %d", info, ierr, st.Czxid)
				}
				he, ok := errors.AsType[*fence.HeldError](aerr)
				if !ok || he.Owner != info.Owner || he.Token != info.Token {
					t.Errorf("Acquire: %v; want a *fence.HeldError naming %q", aerr, info.Owner)
				}
				t.Logf("owner: %s", info.Owner)
			}
			data, _, err := c.Get(path)
			if err != nil || string(data) != tt.data {
				t.Errorf("holder's node after: %q, %v; want %q untouched", data, err, tt.data)
			}
			children, _, _ := c.Children(l.d.lockPath("k"))
			if len(children) != 1 {
				t.Errorf("lock nodes after: %q; want only the holder's", children)
			}
		})
	}
}
