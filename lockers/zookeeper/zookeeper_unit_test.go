package zookeeper

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// TestNewValidates: New refuses a nil connection, a root ZooKeeper would
// refuse or that is "/", and a missing or too short session timeout, with
// errors matching fence.ErrInvalid; MaxTTL is two thirds of the session
// timeout; As gives the connection and nothing else.
func TestNewValidates(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, &Options{SessionTimeout: time.Second}); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil): %v; want fence.ErrInvalid", err)
	}
	c := &zk.Conn{} // never used: New does not contact the server
	for _, o := range []Options{
		{},
		{SessionTimeout: 100 * time.Millisecond},
		{Root: "fence", SessionTimeout: time.Second},
		{Root: "/", SessionTimeout: time.Second},
		{Root: "/a/", SessionTimeout: time.Second},
		{Root: "/a//b", SessionTimeout: time.Second},
		{Root: "/a/./b", SessionTimeout: time.Second},
		{Root: "/a\x00", SessionTimeout: time.Second},
	} {
		if _, err := New(c, &o); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New(%+v): %v; want fence.ErrInvalid", o, err)
		}
	}
	l, d, err := newLocker(c, &Options{SessionTimeout: 9 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info := driver.InfoOf(l); info.MaxTTL != 6*time.Second || info.MinTTL != MinTTL || info.Name != "zookeeper" {
		t.Errorf("Info %+v; want MaxTTL 6s, two thirds of the session timeout", info)
	}
	if got := d.lockPath("jobs/nightly report"); got != "/fence/jobs%2Fnightly%20report" {
		t.Errorf("lock path = %q", got)
	}
	if got := LockPath("", "jobs/nightly report"); got != "/fence/jobs%2Fnightly%20report" {
		t.Errorf("LockPath with the default root = %q", got)
	}
	if got := LockPath("/app/locks", ".x"); got != "/app/locks/%2Ex" {
		t.Errorf("LockPath = %q", got)
	}
	if got := d.lastPath(".x"); got != "/fence/.last/%2Ex" {
		t.Errorf("last path = %q", got)
	}
	var conn *zk.Conn
	if !l.As(&conn) || conn != c {
		t.Errorf("As(**zk.Conn) gave %p, want the connection %p", conn, c)
	}
	var s string
	if l.As(&s) || l.As(nil) || l.As(conn) {
		t.Error("As gave a value for a *string, nil or a *zk.Conn")
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close of a Locker on the caller's connection: %v", err)
	}
}

// TestCuratorOrder: children sort as Curator sorts them, by what follows
// the last "lock-" of the name, so that the holder is the same for both.
func TestCuratorOrder(t *testing.T) {
	t.Parallel()
	names := []string{
		"_c_b1-lock-0000000003",
		"lock-0000000002", // Curator's unprotected name
		"zz",              // no "lock-": sorts by its whole name
		"_c_a9-lock-0000000004",
		"_c_0f-x-lock-0000000001",
	}
	sortChildren(names)
	want := []string{"_c_0f-x-lock-0000000001", "lock-0000000002", "_c_b1-lock-0000000003", "_c_a9-lock-0000000004", "zz"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted %q; want %q", names, want)
	}
	p := newNodePrefix()
	if len(p) != len("_c_")+36+len("-lock-") || sortKey(p+"0000000007") != "0000000007" {
		t.Errorf("node prefix %q is not Curator's protected form", p)
	}
}
