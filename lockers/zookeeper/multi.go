package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.MultiAcquirer = (*store)(nil)

// AcquireAll implements driver.MultiAcquirer with one multi-operation,
// the one-write Acquire of a free key (see the package doc, "Acquiring")
// for every key at once: for each key, delete its lock path (refused
// unless it has no child), create it again with the new lock node under
// it, and write the last record; a lock path or last record missing is
// created instead. The server applies all or none; every lock node gets
// the transaction's zxid as its czxid, each key's token. A key whose
// paths this store has not seen is looked at first (one round trip for
// all of them). Refused because a lock path has nodes, it reports that
// key's first node in a *fence.HeldError, as Acquire does; refused
// because a path appeared or vanished since it was looked at, it looks
// again, twice at most. A Locker refused the delete of a lock path for
// want of a permission gets an error matching errors.ErrUnsupported, and
// fence.Session.LockAll takes the keys one at a time.
func (d *store) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	return run(ctx, func() ([]fence.Lease, error) { return d.acquireAll(keys, owners, ttl) })
}

// keyPaths is what AcquireAll knows of a key's paths.
type keyPaths struct {
	parent, last bool        // the lock path and the last record exist
	seen         fence.Token // the last record's token, 0 when unknown
}

func (d *store) acquireAll(keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	if d.noFree.Load() {
		return nil, fmt.Errorf("this Locker may not delete lock paths: %w", errors.ErrUnsupported)
	}
	paths := make([]keyPaths, len(keys))
	for try := 0; ; try++ {
		if err := d.lookPaths(keys, paths); err != nil {
			return nil, err
		}
		sent := time.Now()
		var ops []any
		nodeOp := make([]int, len(keys)) // index of each key's lock node create
		opKey := []int{}                 // key of each op
		stat := -1                       // an op answering the transaction's stat
		prefixes := make([]string, len(keys))
		add := func(i int, op any) {
			ops = append(ops, op)
			opKey = append(opKey, i)
		}
		for i, key := range keys {
			parent, last := d.lockPath(key), d.lastPath(key)
			prefixes[i] = newNodePrefix()
			if paths[i].parent {
				add(i, &zk.DeleteRequest{Path: parent, Version: -1})
			}
			add(i, &zk.CreateRequest{Path: parent, Acl: d.acl})
			nodeOp[i] = len(ops)
			add(i, &zk.CreateRequest{Path: parent + "/" + prefixes[i], Data: encodeNode(owners[i]), Acl: d.acl, Flags: zk.FlagEphemeral | zk.FlagSequence})
			if !paths[i].last {
				add(i, &zk.CreateRequest{Path: last, Data: encodeLastHere(owners[i]), Acl: d.acl})
			}
			if stat < 0 || paths[i].last {
				if stat < 0 {
					stat = len(ops)
				}
				v := int32(-1)
				if !paths[i].last {
					v = 0
				}
				add(i, &zk.SetDataRequest{Path: last, Data: encodeLastHere(owners[i]), Version: v})
			}
		}
		res, err := d.c.Multi(ops...)
		if err == nil && len(res) == len(ops) && res[stat].Stat != nil {
			return d.heldAll(keys, owners, ttl, sent, paths, res, nodeOp, fence.Token(res[stat].Stat.Mzxid))
		}
		if err == nil {
			err = fmt.Errorf("%d answers to %d operations", len(res), len(ops))
		}
		if !answered(err) {
			for i, key := range keys {
				go d.cleanup(d.lockPath(key), prefixes[i])
			}
			return nil, fmt.Errorf("take the keys: %w", err)
		}
		i, cause := -1, err
		for j, r := range res {
			if r.Error != nil && answered(r.Error) && j < len(opKey) {
				i, cause = opKey[j], r.Error
				break
			}
		}
		switch {
		case errors.Is(cause, zk.ErrNotEmpty) && i >= 0:
			return nil, d.busy(keys[i], d.lockPath(keys[i]))
		case errors.Is(cause, zk.ErrNoAuth):
			return nil, fmt.Errorf("take the keys: %w", cause)
		case errors.Is(cause, zk.ErrNoNode) && i >= 0 && !paths[i].parent && !paths[i].last:
			// The first key of the root: make the root and its ".last".
			if err := d.makePath(d.root + "/.last"); err != nil {
				return nil, err
			}
		}
		if try == 2 {
			return nil, driver.ErrAcquireRaced
		}
		for j := range keys {
			d.forgetSeen(keys[j])
			paths[j] = keyPaths{}
		}
	}
}

// lookPaths fills paths for the keys this store has not seen, reading
// whether their lock path and last record exist, all in one round trip.
func (d *store) lookPaths(keys []string, paths []keyPaths) error {
	var fs []func()
	errs := make([]error, len(keys))
	for i, key := range keys {
		if t, ok := d.lastSeen(key); ok {
			paths[i] = keyPaths{parent: true, last: true, seen: t}
			continue
		}
		fs = append(fs,
			func() {
				var err error
				paths[i].parent, _, err = d.c.Exists(d.lockPath(key))
				errs[i] = errors.Join(errs[i], err)
			},
		)
	}
	// The last records after the lock paths' reads, in their own calls,
	// so that no two functions write one element.
	lastErrs := make([]error, len(keys))
	for i, key := range keys {
		if paths[i].seen != 0 {
			continue
		}
		fs = append(fs, func() {
			data, st, err := d.c.Get(d.lastPath(key))
			switch {
			case errors.Is(err, zk.ErrNoNode):
			case err != nil:
				lastErrs[i] = err
			default:
				_, t, err := decodeLast(key, data, st)
				if err != nil {
					lastErrs[i] = err
					return
				}
				paths[i].last, paths[i].seen = true, t
			}
		})
	}
	parallel(fs...)
	for i := range keys {
		if errs[i] != nil {
			return fmt.Errorf("read the lock path: %w", errs[i])
		}
		if lastErrs[i] != nil {
			if _, ok := errors.AsType[*fence.CorruptError](lastErrs[i]); ok {
				return lastErrs[i]
			}
			return fmt.Errorf("read the last record: %w", lastErrs[i])
		}
	}
	return nil
}

// heldAll records the leases AcquireAll's multi-operation took, whose
// answers are res; token is the transaction's zxid.
func (d *store) heldAll(keys, owners []string, ttl time.Duration, sent time.Time, paths []keyPaths, res []zk.MultiResponse, nodeOp []int, token fence.Token) ([]fence.Lease, error) {
	for i, key := range keys {
		if token <= paths[i].seen {
			for j := range keys {
				d.forgetSeen(keys[j])
				d.deleteNode(res[nodeOp[j]].String)
			}
			return nil, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the last record named token %d, not below the new lock node's czxid %d", paths[i].seen, token)}
		}
	}
	leases := make([]fence.Lease, len(keys))
	for i, key := range keys {
		d.see(key, token)
		leases[i] = d.hold(key, owners[i], res[nodeOp[i]].String, ttl, sent, token)
	}
	return leases, nil
}
