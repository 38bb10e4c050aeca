package zookeeper

import (
	"fmt"
	"strings"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Limits of the ZooKeeper locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes (its path
	// component, escaped, may be three times longer).
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinTTL is the shortest lease: the locker deletes the node of a
	// lease not renewed in time itself (see the package doc), so a
	// lease can be much shorter than the session timeout, but each
	// acquire and renewal is a write the server syncs to its log before
	// answering, which takes tens of milliseconds and more on a busy
	// disk. A fence.Session renews every TTL/3 and bounds each call by
	// TTL/3: at 1 s a write has about 333 ms; at 100 ms (33 ms a call)
	// writes missed their bound on a loaded machine.
	MinTTL = time.Second
	// DefaultRoot is the parent of the lock nodes of a locker whose
	// Options.Root is empty.
	DefaultRoot = "/fence"
)

// Options configure New.
type Options struct {
	// Root is the ZooKeeper path under which every key has its lock
	// node (Root/KEY, the key escaped) and its last record
	// (Root/.last/KEY). It starts with a slash and does not end with
	// one; it may not be "/". Lockers share their leases when they have
	// the same root on the same ensemble; a Curator InterProcessMutex
	// on Root/KEY excludes them and is excluded. Default: DefaultRoot.
	Root string
	// SessionTimeout is the session timeout of conn as the server
	// negotiated it: what zk.Connect was given, when it lies between
	// the server's minSessionTimeout and maxSessionTimeout (2 and 20
	// ticks by default). The longest lease accepted is two thirds of
	// it (see the package doc): a longer SessionTimeout than the
	// server granted breaks the guarantee of the token's holder being
	// alone. Required.
	SessionTimeout time.Duration
	// Clock supplies the send times from which Lease.ValidUntil is
	// computed, and on which the portable layer refuses a Renew or
	// Release of a lease that ran out. The deletion of a lease's node
	// when it was not renewed in time runs on the system's timers, as
	// the server's session expiry does. Default: fence.SystemClock.
	Clock fence.Clock
	// ACL is the ACL of the nodes the locker creates. Default:
	// zk.WorldACL(zk.PermAll).
	ACL []zk.ACL
}

// New returns a *fence.Locker that keeps its leases in ZooKeeper through
// conn, under the root of opts (see Options). It checks the options but
// does not contact the server. Close conn when done with the Locker (the
// session's end deletes every node it holds); the Locker's Close does
// not. The longest lease the Locker accepts is two thirds of
// Options.SessionTimeout.
func New(conn *zk.Conn, opts *Options) (*fence.Locker, error) {
	l, _, err := newLocker(conn, opts, nil)
	return l, err
}

// newLocker is New, with the store under the Locker and the Locker's
// Close (the URL opener's, which closes its connection).
func newLocker(conn *zk.Conn, opts *Options, closeConn func() error) (*fence.Locker, *store, error) {
	if conn == nil {
		return nil, nil, &fence.InvalidError{Field: "conn", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	if err := checkRoot(o.Root); err != nil {
		return nil, nil, err
	}
	maxTTL := o.SessionTimeout * 2 / 3
	if maxTTL < MinTTL {
		return nil, nil, &fence.InvalidError{Field: "SessionTimeout", Reason: fmt.Sprintf("%v: want the session timeout the server negotiated, at least %v", o.SessionTimeout, MinTTL*3/2)}
	}
	if o.ACL == nil {
		o.ACL = zk.WorldACL(zk.PermAll)
	}
	clock := driver.ClockOrSystem(o.Clock)
	d := newDriver(conn, o.Root, maxTTL, o.ACL)
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: clock, Close: closeConn})
	if err != nil {
		return nil, nil, err
	}
	return l, d, nil
}

// LockPath returns the ZooKeeper path under which a locker with root
// (Options.Root; "" is DefaultRoot) creates key's lock nodes: the path a
// Curator InterProcessMutex uses to take the same lock.
func LockPath(root, key string) string {
	if root == "" {
		root = DefaultRoot
	}
	return root + "/" + escape(key)
}

// checkRoot checks a root path.
func checkRoot(root string) error {
	bad := func(why string) error {
		return &fence.InvalidError{Field: "Root", Reason: fmt.Sprintf("%q %s", root, why)}
	}
	switch {
	case !strings.HasPrefix(root, "/"):
		return bad("does not start with a slash")
	case root == "/" || strings.HasSuffix(root, "/"):
		return bad("ends with a slash")
	case strings.Contains(root, "//"):
		return bad("has an empty component")
	}
	for _, c := range strings.Split(root[1:], "/") {
		if c == "." || c == ".." {
			return bad("has a . or .. component")
		}
	}
	for _, r := range root {
		if r == 0 || (r > 0 && r < 0x20) || (r >= 0x7f && r <= 0x9f) || (r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return bad(fmt.Sprintf("has the character %U, which ZooKeeper refuses in paths", r))
		}
	}
	return nil
}
