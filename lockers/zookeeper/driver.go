package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// store is the driver.Locker on a ZooKeeper ensemble, on input the
// portable layer has validated. Its errors are bare causes; the
// portable fence.Locker prefixes them.
type store struct {
	c      *zk.Conn
	root   string
	maxTTL time.Duration
	acl    []zk.ACL

	mu   sync.Mutex
	held map[heldKey]*holding   // the leases this store gave out
	seen map[string]fence.Token // tokens of valid last records read or written, by key

	noFree atomic.Bool // acquireFree was refused for want of a permission
}

// maxSeen bounds the last records a store remembers; past it, it
// forgets them all and reads them again.
const maxSeen = 4096

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
	_ driver.BatchRenewer    = (*store)(nil)
)

// As implements driver.Aser: it gives the connection the Locker runs on to
// a **zk.Conn.
func (d *store) As(target any) bool {
	if t, ok := target.(**zk.Conn); ok {
		*t = d.c
		return true
	}
	return false
}

// heldKey names a lease this store gave out: AcquireAll gives the same
// token to every key of a set.
type heldKey struct {
	token fence.Token
	key   string
}

// holding is a lease this store gave out: its lock node, and when the
// store deletes the node unless it is renewed.
type holding struct {
	key, owner, path string
	ttl              time.Duration

	mu       sync.Mutex // held across a Renew's or Release's requests
	deadline time.Time  // on the system clock
	timer    *time.Timer
	gone     bool   // the node was deleted or found missing
	why      string // why it is gone
	version  int32  // the node's data version after this store's latest write
}

func newDriver(c *zk.Conn, root string, maxTTL time.Duration, acl []zk.ACL) *store {
	return &store{c: c, root: root, maxTTL: maxTTL, acl: acl, held: map[heldKey]*holding{}, seen: map[string]fence.Token{}}
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "zookeeper", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: d.maxTTL}
}

// lockPath is the parent of key's lock nodes.
func (d *store) lockPath(key string) string { return LockPath(d.root, key) }

// lastPath is key's last record.
func (d *store) lastPath(key string) string { return d.root + "/.last/" + escape(key) }

// Acquire implements driver.Locker with one try of Curator's recipe.
//
// When this store has seen key's last record valid (read or written by
// an earlier Acquire), it first tries the key as free, in one
// multi-operation: it deletes key's lock path (refused unless it has no
// lock node: the key is free), creates it again with the new lock node
// under it, and writes the last record. The token is the transaction's
// zxid: the lock node's czxid, and the last record's mzxid, which the
// record names. Refused because the lock path has nodes, it reads the
// first one's owner and czxid for a *fence.HeldError.
//
// Otherwise, or when that is refused for another reason, it creates an
// ephemeral sequential node under key's lock path, and lists the lock
// path's children (with its own node's czxid, the token, and the last
// record, in the same round trip). When its node is first in Curator's
// order, it holds the key: one multi-operation writes the last record on
// the condition that its node still exists, and the lease is returned.
// Otherwise it deletes its node and reports the first node's owner and
// czxid in a *fence.HeldError. A holder that left in between gets
// driver.ErrAcquireRaced.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	return run(ctx, func() (fence.Lease, error) {
		sent := time.Now()
		if seen, ok := d.lastSeen(key); ok && !d.noFree.Load() {
			if lease, done, err := d.acquireFree(key, owner, ttl, sent, seen); done {
				return lease, err
			}
		}
		return d.acquire(key, owner, ttl, sent)
	})
}

// acquireFree tries key as free (see Acquire), in one multi-operation,
// seen being the token of the last record this store saw. done is false
// when the store refused it for another reason than a busy key (its lock
// path or its last record missing, a permission refused); Acquire then
// takes the long way.
func (d *store) acquireFree(key, owner string, ttl time.Duration, sent time.Time, seen fence.Token) (lease fence.Lease, done bool, err error) {
	parent := d.lockPath(key)
	prefix := newNodePrefix()
	res, err := d.c.Multi(
		&zk.DeleteRequest{Path: parent, Version: -1},
		&zk.CreateRequest{Path: parent, Acl: d.acl},
		&zk.CreateRequest{Path: parent + "/" + prefix, Data: encodeNode(owner), Acl: d.acl, Flags: zk.FlagEphemeral | zk.FlagSequence},
		&zk.SetDataRequest{Path: d.lastPath(key), Data: encodeLastHere(owner), Version: -1},
	)
	switch {
	case err == nil && len(res) == 4 && res[3].Stat != nil:
	case err == nil:
		go d.cleanup(parent, prefix)
		return fence.Lease{}, true, fmt.Errorf("take the free key: %d answers to 4 operations", len(res))
	case errors.Is(err, zk.ErrNotEmpty):
		return fence.Lease{}, true, d.busy(key, parent)
	case errors.Is(err, zk.ErrNoAuth):
		d.noFree.Store(true)
		return fence.Lease{}, false, nil
	case answered(err):
		d.forgetSeen(key)
		return fence.Lease{}, false, nil
	default:
		go d.cleanup(parent, prefix)
		return fence.Lease{}, true, fmt.Errorf("take the free key: %w", err)
	}
	path, st := res[2].String, res[3].Stat
	token := fence.Token(st.Mzxid)
	if token <= seen {
		d.forgetSeen(key)
		d.deleteNode(path)
		return fence.Lease{}, true, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the last record named token %d, not below the new lock node's czxid %d", seen, token)}
	}
	d.see(key, token)
	return d.hold(key, owner, path, ttl, sent, token), true, nil
}

// busy reports the holder of key, whose lock path parent has nodes, in a
// *fence.HeldError.
func (d *store) busy(key, parent string) error {
	children, _, err := d.c.Children(parent)
	switch {
	case errors.Is(err, zk.ErrNoNode) || err == nil && len(children) == 0:
		return driver.ErrAcquireRaced
	case err != nil:
		return fmt.Errorf("list the lock nodes: %w", err)
	}
	sortChildren(children)
	return d.heldError(key, parent, children[0])
}

// hold records the lease of the lock node path and returns it.
func (d *store) hold(key, owner, path string, ttl time.Duration, sent time.Time, token fence.Token) fence.Lease {
	h := &holding{key: key, owner: owner, path: path, ttl: ttl, deadline: sent.Add(ttl)}
	h.mu.Lock()
	h.timer = time.AfterFunc(time.Until(h.deadline), func() { d.expire(token, h) })
	h.mu.Unlock()
	d.mu.Lock()
	d.held[heldKey{token, key}] = h
	d.mu.Unlock()
	return fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl}
}

// lastSeen returns the token of the last record of key this store saw
// valid.
func (d *store) lastSeen(key string) (fence.Token, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.seen[key]
	return t, ok
}

// see remembers the token of key's last record.
func (d *store) see(key string, t fence.Token) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.seen) >= maxSeen {
		clear(d.seen)
	}
	d.seen[key] = t
}

func (d *store) forgetSeen(key string) {
	d.mu.Lock()
	delete(d.seen, key)
	d.mu.Unlock()
}

func (d *store) acquire(key, owner string, ttl time.Duration, sent time.Time) (fence.Lease, error) {
	parent := d.lockPath(key)
	prefix := newNodePrefix()
	path, err := d.c.Create(parent+"/"+prefix, encodeNode(owner), zk.FlagEphemeral|zk.FlagSequence, d.acl)
	if errors.Is(err, zk.ErrNoNode) {
		if err = d.makePath(parent); err == nil {
			path, err = d.c.Create(parent+"/"+prefix, encodeNode(owner), zk.FlagEphemeral|zk.FlagSequence, d.acl)
		}
	}
	if err != nil {
		if !answered(err) {
			go d.cleanup(parent, prefix)
		}
		return fence.Lease{}, fmt.Errorf("create the lock node: %w", err)
	}
	name := path[len(parent)+1:]
	var (
		children            []string
		ours, lastStat      *zk.Stat
		last                []byte
		cerr, oerr, lastErr error
	)
	parallel(
		func() { children, _, cerr = d.c.Children(parent) },
		func() { _, ours, oerr = d.c.Exists(path) },
		func() { last, lastStat, lastErr = d.c.Get(d.lastPath(key)) },
	)
	fail := func(err error) (fence.Lease, error) {
		d.deleteNode(path)
		return fence.Lease{}, err
	}
	switch {
	case cerr != nil:
		return fail(fmt.Errorf("list the lock nodes: %w", cerr))
	case oerr != nil:
		return fail(fmt.Errorf("read the lock node: %w", oerr))
	case lastErr != nil && !errors.Is(lastErr, zk.ErrNoNode):
		return fail(fmt.Errorf("read the last record: %w", lastErr))
	case ours.Czxid == 0:
		return fence.Lease{}, driver.ErrAcquireRaced // broken already
	}
	if lastErr == nil {
		if _, t, err := decodeLast(key, last, lastStat); err == nil {
			d.see(key, t)
		}
	}
	sortChildren(children)
	if len(children) == 0 || children[0] != name {
		d.deleteNode(path)
		if len(children) == 0 {
			return fence.Lease{}, driver.ErrAcquireRaced
		}
		return fence.Lease{}, d.heldError(key, parent, children[0])
	}
	token := fence.Token(ours.Czxid)
	check := &zk.CheckVersionRequest{Path: path, Version: -1}
	var write any
	if lastErr == nil {
		_, lastToken, err := decodeLast(key, last, lastStat)
		if err != nil {
			return fail(err)
		}
		if lastToken >= token {
			return fail(&fence.CorruptError{Key: key, Reason: fmt.Sprintf("the last record names token %d, not below the new lock node's czxid %d", lastToken, token)})
		}
		write = &zk.SetDataRequest{Path: d.lastPath(key), Data: encodeLast(owner, token), Version: lastStat.Version}
	} else {
		write = &zk.CreateRequest{Path: d.lastPath(key), Data: encodeLast(owner, token), Acl: d.acl}
	}
	res, err := d.c.Multi(check, write)
	if err != nil && len(res) == 2 && errors.Is(res[1].Error, zk.ErrNoNode) && lastErr != nil {
		// The first last record of the root: make its parent.
		if err = d.makePath(d.root + "/.last"); err == nil {
			res, err = d.c.Multi(check, write)
		}
	}
	if err != nil {
		switch {
		case len(res) == 2 && errors.Is(res[0].Error, zk.ErrNoNode):
			return fence.Lease{}, driver.ErrAcquireRaced // broken meanwhile
		case len(res) == 2 && (errors.Is(res[1].Error, zk.ErrBadVersion) || errors.Is(res[1].Error, zk.ErrNodeExists)):
			d.forgetSeen(key)
			return fail(driver.ErrAcquireRaced)
		}
		return fail(fmt.Errorf("write the last record: %w", err))
	}
	d.see(key, token)
	return d.hold(key, owner, path, ttl, sent, token), nil
}

// heldError reports the holder's node name under parent in a
// *fence.HeldError.
func (d *store) heldError(key, parent, name string) error {
	data, st, err := d.c.Get(parent + "/" + name)
	if errors.Is(err, zk.ErrNoNode) {
		return driver.ErrAcquireRaced
	}
	if err != nil {
		return &fence.HeldError{Key: key}
	}
	owner, err := nodeOwner(key, name, data, st.EphemeralOwner)
	if err != nil {
		return err
	}
	return &fence.HeldError{Key: key, Owner: owner, Token: fence.Token(st.Czxid)}
}

// makePath creates path and its missing parents as persistent nodes.
func (d *store) makePath(path string) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := d.c.Create(path[:i], nil, 0, d.acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", path[:i], err)
		}
	}
	return nil
}

// retryFor is how long the store goes on trying to delete a node of
// its own it no longer wants; past it, the session's end deletes it.
func (d *store) retryFor() time.Duration { return d.maxTTL * 3 / 2 }

// deleteNode deletes a lock node of this driver's session, trying again
// while the connection is down.
func (d *store) deleteNode(path string) {
	for end := time.Now().Add(d.retryFor()); ; {
		err := d.c.Delete(path, -1)
		if err == nil || errors.Is(err, zk.ErrNoNode) || over(err) || time.Now().After(end) || closed(d.c) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cleanup deletes the lock node named prefix under parent, if a create
// whose answer was lost made one.
func (d *store) cleanup(parent, prefix string) {
	for end := time.Now().Add(d.retryFor()); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		children, _, err := d.c.Children(parent)
		if errors.Is(err, zk.ErrNoNode) || over(err) || closed(d.c) {
			return
		}
		if err != nil {
			continue
		}
		for _, c := range children {
			if strings.HasPrefix(c, prefix) {
				d.deleteNode(parent + "/" + c)
			}
		}
		return
	}
}

// expire runs when h's deadline may have passed: it deletes the node of
// a lease not renewed in time.
func (d *store) expire(token fence.Token, h *holding) {
	h.mu.Lock()
	if h.gone {
		h.mu.Unlock()
		return
	}
	if wait := time.Until(h.deadline); wait > 0 {
		h.timer.Reset(wait)
		h.mu.Unlock()
		return
	}
	h.gone, h.why = true, "it was not renewed in time, and this Locker deleted its node"
	h.mu.Unlock()
	d.forget(token, h.key)
	d.deleteNode(h.path)
}

func (d *store) forget(token fence.Token, key string) {
	d.mu.Lock()
	delete(d.held, heldKey{token, key})
	d.mu.Unlock()
}

// lookup returns the holding of lease, locked, or a *fence.NotHeldError.
func (d *store) lookup(lease fence.Lease) (*holding, error) {
	d.mu.Lock()
	h := d.held[heldKey{lease.Token, lease.Key}]
	d.mu.Unlock()
	if h == nil || h.key != lease.Key || h.owner != lease.Owner {
		return nil, &fence.NotHeldError{Key: lease.Key, Reason: "no lock node of this Locker's session holds it: released, broken, expired, or never acquired here"}
	}
	h.mu.Lock()
	if !h.gone && !time.Now().Before(h.deadline) {
		// Its timer is late: do what expire does.
		h.gone, h.why = true, "it was not renewed in time, and this Locker deleted its node"
		h.timer.Stop()
		d.forget(lease.Token, lease.Key)
		go d.deleteNode(h.path)
	}
	if h.gone {
		h.mu.Unlock()
		return nil, &fence.NotHeldError{Key: lease.Key, Reason: h.why}
	}
	return h, nil
}

// lost marks h gone for why and returns the *fence.NotHeldError of it.
func (d *store) lost(token fence.Token, h *holding, why string) error {
	h.gone, h.why = true, why
	h.timer.Stop()
	d.forget(token, h.key)
	return &fence.NotHeldError{Key: h.key, Reason: why}
}

// Renew implements driver.Locker: it syncs the server it talks to
// with the leader and reads the lease's node. A node still there, with
// the lease's token as czxid, and of this client's session, proves the
// session alive on the leader after the renewal was sent, so that the
// server keeps the node at least a session timeout after it, longer than
// the TTL. The node is then kept for another TTL by this driver.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	_, err := run(ctx, func() (struct{}, error) { return struct{}{}, d.renew(lease) })
	return err
}

func (d *store) renew(lease fence.Lease) error {
	h, err := d.lookup(lease)
	if err != nil {
		return err
	}
	defer h.mu.Unlock()
	sent := time.Now()
	if _, err := d.c.Sync(h.path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("sync with the leader: %w", err)
	}
	_, st, err := d.c.Exists(h.path)
	switch {
	case err != nil:
		return fmt.Errorf("read the lock node: %w", err)
	case st.Czxid == 0:
		return d.lost(lease.Token, h, "its lock node is gone: broken, or the session ended")
	case st.Czxid != int64(lease.Token) || st.EphemeralOwner != d.c.SessionID():
		return d.lost(lease.Token, h, fmt.Sprintf("its lock node has czxid %d of session 0x%x", st.Czxid, st.EphemeralOwner))
	}
	if until := sent.Add(lease.TTL); until.After(h.deadline) {
		h.deadline = until
	}
	return nil
}

// Limits of a RenewBatch: from checkMin leases on, it checks the lease
// nodes with multi-operations of at most checkOps checks and checkBytes
// of paths each; below, it reads them, at most readsInFlight at once.
const (
	checkMin      = 32
	checkOps      = 1000
	checkBytes    = 256 << 10
	readsInFlight = 256
)

// RenewBatch implements driver.BatchRenewer: it renews every lease as
// Renew does, in one round trip or two whatever the number of leases.
// Fewer than 32 leases are renewed as by Renew, with one sync for all and
// their nodes' reads sent together: two round trips, one small read per
// lease, nothing written. From 32 leases on, the nodes are checked with
// multi-operations of up to 1,000 checks each, sent together: the leader
// answers each from its own tree, which proves the session alive on the
// leader after the renewal was sent, as a sync and a read do. A
// multi-operation is a transaction that the servers log, about the
// length of the nodes' paths (some 70 bytes and the escaped key per
// lease; computed, not measured). A multi-operation refused because a node
// is gone (a broken lease, or one that expired) is followed by the reads
// of its leases, which tell which are gone.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs, err := run(ctx, func() ([]error, error) { return d.renewBatch(leases), nil })
	if err != nil {
		errs = make([]error, len(leases))
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

func (d *store) renewBatch(leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	paths := make([]string, len(leases))
	var live []int
	for i, lease := range leases {
		h, err := d.lookup(lease)
		if err != nil {
			errs[i] = err
			continue
		}
		paths[i] = h.path
		h.mu.Unlock()
		live = append(live, i)
	}
	if len(live) < checkMin {
		d.renewByReads(leases, live, paths, errs)
		return errs
	}
	var chunks [][]int
	for n, size := 0, 0; n < len(live); n++ {
		if len(chunks) == 0 || len(chunks[len(chunks)-1]) == checkOps || size+len(paths[live[n]]) > checkBytes {
			chunks, size = append(chunks, nil), 0
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], live[n])
		size += len(paths[live[n]])
	}
	sent := time.Now()
	cerrs := make([]error, len(chunks))
	var wg sync.WaitGroup
	for k, chunk := range chunks {
		wg.Go(func() {
			ops := make([]any, len(chunk))
			for j, i := range chunk {
				ops[j] = &zk.CheckVersionRequest{Path: paths[i], Version: -1}
			}
			_, cerrs[k] = d.c.Multi(ops...)
		})
	}
	wg.Wait()
	var reread []int
	for k, chunk := range chunks {
		switch err := cerrs[k]; {
		case err == nil:
			for _, i := range chunk {
				errs[i] = d.renewed(leases[i], sent, nil)
			}
		case answered(err):
			reread = append(reread, chunk...)
		default:
			for _, i := range chunk {
				errs[i] = fmt.Errorf("check the lock nodes: %w", err)
			}
		}
	}
	if len(reread) > 0 {
		d.renewByReads(leases, reread, paths, errs)
	}
	return errs
}

// renewByReads renews the leases of leases at the indexes todo, whose
// lock nodes are at paths: one sync with the leader, then the reads of
// the nodes sent together. It sets their errors in errs.
func (d *store) renewByReads(leases []fence.Lease, todo []int, paths []string, errs []error) {
	if len(todo) == 0 {
		return
	}
	sent := time.Now()
	if _, err := d.c.Sync(d.root); err != nil && !errors.Is(err, zk.ErrNoNode) {
		err = fmt.Errorf("sync with the leader: %w", err)
		for _, i := range todo {
			errs[i] = err
		}
		return
	}
	stats := make([]*zk.Stat, len(leases))
	var wg sync.WaitGroup
	slots := make(chan struct{}, readsInFlight)
	for _, i := range todo {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			_, stats[i], errs[i] = d.c.Exists(paths[i])
		})
	}
	wg.Wait()
	for _, i := range todo {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("read the lock node: %w", errs[i])
			continue
		}
		errs[i] = d.renewed(leases[i], sent, stats[i])
	}
}

// renewed extends lease after a sync sent at sent, when st, its lock
// node's stat read after the sync, proves it held; a nil st stands for a
// check of the node sent at sent that the leader passed.
func (d *store) renewed(lease fence.Lease, sent time.Time, st *zk.Stat) error {
	h, err := d.lookup(lease)
	if err != nil {
		return err
	}
	defer h.mu.Unlock()
	switch {
	case st == nil:
	case st.Czxid == 0:
		return d.lost(lease.Token, h, "its lock node is gone: broken, or the session ended")
	case st.Czxid != int64(lease.Token) || st.EphemeralOwner != d.c.SessionID():
		return d.lost(lease.Token, h, fmt.Sprintf("its lock node has czxid %d of session 0x%x", st.Czxid, st.EphemeralOwner))
	}
	if until := sent.Add(lease.TTL); until.After(h.deadline) {
		h.deadline = until
	}
	return nil
}

// Release implements driver.Locker: it deletes the lease's lock
// node. Its path holds a random UUID of the acquisition, so no other
// lease's node has it: the delete is a compare-and-delete. A node
// already gone gets a *fence.NotHeldError. The last record stays.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	_, err := run(ctx, func() (struct{}, error) { return struct{}{}, d.release(lease) })
	return err
}

func (d *store) release(lease fence.Lease) error {
	h, err := d.lookup(lease)
	if err != nil {
		return err
	}
	defer h.mu.Unlock()
	err = d.c.Delete(h.path, -1)
	switch {
	case err == nil:
		_ = d.lost(lease.Token, h, "it was released")
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return d.lost(lease.Token, h, "its lock node is gone: broken, or the session ended")
	}
	return fmt.Errorf("delete the lock node: %w", err)
}

// Break implements driver.Locker: it deletes the first node under
// key's lock path, whoever's it is (a Curator client's too). The next
// lock node is created later, so its czxid is higher. A Curator client
// queued behind the broken node gets the lock at once.
func (d *store) Break(ctx context.Context, key string) error {
	_, err := run(ctx, func() (struct{}, error) { return struct{}{}, d.breakKey(key) })
	return err
}

func (d *store) breakKey(key string) error {
	parent := d.lockPath(key)
	if _, err := d.c.Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("sync with the leader: %w", err)
	}
	children, _, err := d.c.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list the lock nodes: %w", err)
	}
	if len(children) == 0 {
		return nil
	}
	sortChildren(children)
	if err := d.c.Delete(parent+"/"+children[0], -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete the lock node: %w", err)
	}
	return nil
}

// Inspect implements driver.Locker: after a sync with the leader, it
// reads the first node under key's lock path (the holder, whose czxid is
// its token) or, when there is none, the key's last record. ValidUntil
// is left zero: the holder's renewals are not written to the server.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	return run(ctx, func() (fence.LockInfo, error) { return d.inspect(key) })
}

func (d *store) inspect(key string) (fence.LockInfo, error) {
	parent := d.lockPath(key)
	if _, err := d.c.Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fence.LockInfo{}, fmt.Errorf("sync with the leader: %w", err)
	}
	for range 5 {
		var (
			children   []string
			last       []byte
			lastStat   *zk.Stat
			cerr, lerr error
		)
		parallel(
			func() { children, _, cerr = d.c.Children(parent) },
			func() { last, lastStat, lerr = d.c.Get(d.lastPath(key)) },
		)
		if cerr != nil && !errors.Is(cerr, zk.ErrNoNode) {
			return fence.LockInfo{}, fmt.Errorf("list the lock nodes: %w", cerr)
		}
		if len(children) > 0 {
			sortChildren(children)
			data, st, err := d.c.Get(parent + "/" + children[0])
			if errors.Is(err, zk.ErrNoNode) {
				continue // the holder left: look again
			}
			if err != nil {
				return fence.LockInfo{}, fmt.Errorf("read the lock node: %w", err)
			}
			owner, value, err := parseNode(key, children[0], data, st.EphemeralOwner)
			if err != nil {
				return fence.LockInfo{}, err
			}
			return fence.LockInfo{Key: key, Held: true, Owner: owner, Token: fence.Token(st.Czxid), Value: value}, nil
		}
		if errors.Is(lerr, zk.ErrNoNode) {
			return fence.LockInfo{Key: key}, nil
		}
		if lerr != nil {
			return fence.LockInfo{}, fmt.Errorf("read the last record: %w", lerr)
		}
		owner, token, err := decodeLast(key, last, lastStat)
		if err != nil {
			return fence.LockInfo{}, err
		}
		return fence.LockInfo{Key: key, Owner: owner, Token: token}, nil
	}
	return fence.LockInfo{}, errors.New("the holder changed five times while reading")
}
