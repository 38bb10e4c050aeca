package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/etcdclient"
)

var _ driver.MultiAcquirer = (*store)(nil)

// MaxMultiKeys is the most keys fence.Session.LockAll takes in one etcd
// transaction: it puts two records per key, and etcd refuses a
// transaction of more than 128 operations in a branch by default
// (--max-txn-ops). A larger set is taken one key at a time, in order.
const MaxMultiKeys = 64

// AcquireAll implements driver.MultiAcquirer with one transaction, as
// Acquire's for one key: if every lock record's create revision is 0,
// it puts them all, attached to the Locker's shared etcd lease of ttl,
// with their last records; otherwise it reads the lock records, writes
// nothing, and reports the first one there in a *fence.HeldError. Every
// key gets the transaction's revision as its token. More than
// MaxMultiKeys keys, or a transaction the server refuses as too large
// (a server with a lower --max-txn-ops), get an error matching
// errors.ErrUnsupported.
func (d *store) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	if len(keys) > MaxMultiKeys {
		return nil, fmt.Errorf("%d keys: one etcd transaction takes at most %d: %w", len(keys), MaxMultiKeys, errors.ErrUnsupported)
	}
	secs := seconds(ttl)
	for range 2 {
		id, at, err := d.groupLease(ctx, secs)
		if err != nil {
			return nil, err
		}
		leases, err := d.acquireAll(ctx, keys, owners, ttl, secs, id, at)
		if !errors.Is(err, errLeaseGone) {
			return leases, err
		}
	}
	return nil, errors.New("the shared lease ended twice in a row")
}

// acquireAll runs AcquireAll's transaction, as acquire does for one key.
func (d *store) acquireAll(ctx context.Context, keys, owners []string, ttl time.Duration, secs, id int64, at time.Time) ([]fence.Lease, error) {
	sent := time.Now()
	var kept chan error
	if at.Add(life(secs)).Before(sent.Add(ttl)) {
		kept = make(chan error, 1)
		go func() { kept <- d.keepAlive(ctx, id, secs) }()
	}
	cmps := make([]clientv3.Cmp, len(keys))
	puts := make([]clientv3.Op, 0, 2*len(keys))
	gets := make([]clientv3.Op, len(keys))
	recs := make([]*rec, len(keys))
	for i, key := range keys {
		held, value := d.held(key), encodeRecord(owners[i])
		cmps[i] = clientv3.Compare(clientv3.CreateRevision(held), "=", 0)
		puts = append(puts, clientv3.OpPut(held, value, clientv3.WithLease(clientv3.LeaseID(id))), clientv3.OpPut(d.last(key), value))
		gets[i] = clientv3.OpGet(held)
		recs[i] = d.shared.begin(key, owners[i], id)
	}
	resp, err := d.c.Txn(ctx).If(cmps...).Then(puts...).Else(gets...).Commit()
	var kerr error
	if kept != nil {
		kerr = <-kept
	}
	until := sent.Add(ttl)
	endAll := func(change func(i int) func(*rec)) {
		for i, key := range keys {
			d.shared.end(key, recs[i], change(i))
		}
	}
	none := func(int) func(*rec) { return nil }
	switch {
	case err != nil && etcdclient.Refused(err):
		endAll(none)
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			d.shared.ended(id)
			return nil, errLeaseGone
		case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
			return nil, fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
		}
		return nil, err
	case err != nil:
		endAll(func(i int) func(*rec) { return lost(owners[i], id, until) })
		return nil, err
	case !resp.Succeeded:
		endAll(none)
		for i, r := range resp.Responses {
			if kvs := r.GetResponseRange().Kvs; len(kvs) > 0 {
				return nil, d.heldError(ctx, keys[i], kvs)
			}
		}
		return nil, driver.ErrAcquireRaced // cannot be: a record was there
	}
	leases := make([]fence.Lease, len(keys))
	for i, key := range keys {
		leases[i] = fence.Lease{Key: key, Owner: owners[i], Token: fence.Token(resp.Header.Revision), TTL: ttl}
	}
	endAll(func(i int) func(*rec) { return created(leases[i], id, until) })
	if errors.Is(kerr, errLeaseGone) {
		return nil, errLeaseGone // and the records with it
	}
	if kerr != nil {
		return nil, kerr
	}
	return leases, nil
}
