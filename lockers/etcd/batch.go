package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/etcdclient"
)

// batchReads is the most lock records one transaction reads; etcd
// refuses transactions of more than 128 operations by default
// (--max-txn-ops).
const batchReads = 100

// RenewBatch implements driver.BatchRenewer. The leases this Locker
// acquired (and whose last call's outcome it knows) are renewed in two
// requests per shared etcd lease, sent together whatever their number: a
// keepalive of the shared lease, and a check that their records are
// still there, which is one transaction reading them all when there are
// at most batchReads of them, and otherwise one question for the keys
// attached to the shared lease (etcd's lease time-to-live with its keys:
// a record released, broken, swept or expired is no longer attached, and
// another holder's record is attached to another lease). Each renewed
// record's own end moves to the send time plus its TTL.
//
// Any other lease (acquired by another Locker, or after a lost answer),
// and any record not found attached, is read, batchReads per
// transaction, checked as its token and owner say; one found held on an
// etcd lease that is not one of this Locker's shared leases is moved to
// this Locker's shared lease of its TTL (a put that keeps its create
// revision, so its token), so that a Locker's records never keep another
// Locker's etcd lease alive.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	sent := time.Now()
	errs := make([]error, len(leases))
	ids := make([]int64, len(leases)) // etcd lease of each record, once known
	var known, unknown []int
	d.shared.mu.Lock()
	seq := d.shared.seq
	for i, l := range leases {
		if r := d.shared.usableLocked(l, seq); r != nil {
			if _, ok := d.shared.ids[r.lease]; ok {
				ids[i] = r.lease
				known = append(known, i)
				continue
			}
		}
		unknown = append(unknown, i)
	}
	d.shared.mu.Unlock()
	byKeys := len(known) > batchReads

	// First the known leases' shared leases, kept alive and checked, and
	// the others read, all at once.
	kept := make(map[int64]error) // keepalive outcome by shared lease, once all answered
	attached := make(map[int64]map[string]bool)
	var groupIDs []int64
	for _, i := range known {
		if _, ok := kept[ids[i]]; !ok {
			kept[ids[i]] = nil
			groupIDs = append(groupIDs, ids[i])
		}
	}
	var reads map[int][]*mvccpb.KeyValue
	var readErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range groupIDs {
		secs, _ := d.shared.secs(id)
		wg.Go(func() {
			err := d.keepAlive(ctx, id, secs)
			mu.Lock()
			defer mu.Unlock()
			kept[id] = errors.Join(kept[id], err)
		})
		if byKeys {
			wg.Go(func() {
				keys, err := d.attachedKeys(ctx, id)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					kept[id] = errors.Join(kept[id], err)
					return
				}
				attached[id] = keys
			})
		}
	}
	toRead := unknown
	if !byKeys {
		toRead = append(toRead, known...)
	}
	wg.Go(func() { reads, readErr = d.readRecords(ctx, leases, toRead) })
	wg.Wait()

	// Settle the known leases checked by their keys, and read again those
	// not found attached or changed meanwhile.
	var again []int
	if byKeys {
		d.shared.mu.Lock()
		for _, i := range known {
			id := ids[i]
			switch {
			case errors.Is(kept[id], errLeaseGone):
				again = append(again, i) // its records ended with it, unless moved
			case kept[id] != nil:
				errs[i] = kept[id]
			case !attached[id][d.held(leases[i].Key)] || d.shared.usableLocked(leases[i], seq) == nil:
				again = append(again, i)
			default:
				d.shared.renewedLocked(leases[i], id, sent)
			}
		}
		d.shared.mu.Unlock()
	}
	if readErr != nil {
		for _, i := range toRead {
			errs[i] = readErr
		}
		toRead = nil
	}
	if len(again) > 0 {
		more, err := d.readRecords(ctx, leases, again)
		if err != nil {
			for _, i := range again {
				errs[i] = err
			}
		} else {
			if reads == nil {
				reads = make(map[int][]*mvccpb.KeyValue)
			}
			for i, kvs := range more {
				reads[i] = kvs
			}
			toRead = append(toRead, again...)
		}
	}

	// Settle the leases read: check each record, move those held on
	// another Locker's etcd lease, keep alive the etcd leases not kept
	// alive yet.
	var extra []int
	for _, i := range toRead {
		id, err := d.check(leases[i], reads[i])
		if err != nil {
			errs[i] = err
			continue
		}
		ids[i] = id
		if _, ok := d.shared.secs(id); !ok {
			// The put gives it its full TTL.
			errs[i] = d.adopt(ctx, leases[i], id, sent)
			continue
		}
		if _, ok := kept[id]; !ok {
			extra = append(extra, i)
			continue
		}
		if kept[id] != nil {
			errs[i] = kept[id]
			continue
		}
		d.renewed(leases[i], id, sent)
	}
	if len(extra) > 0 {
		d.keepAliveMany(ctx, leases, ids, extra, errs, sent)
	}
	for i, err := range errs {
		if errors.Is(err, errLeaseGone) {
			errs[i] = &fence.NotHeldError{Key: leases[i].Key, Reason: "its etcd lease ended"}
		}
	}
	return errs
}

// renewed notes that lease's record, on etcd lease id, was renewed by a
// request sent at at.
func (d *store) renewed(lease fence.Lease, id int64, at time.Time) {
	d.shared.mu.Lock()
	defer d.shared.mu.Unlock()
	d.shared.renewedLocked(lease, id, at)
}

// attachedKeys asks the etcd keys attached to etcd lease id.
func (d *store) attachedKeys(ctx context.Context, id int64) (map[string]bool, error) {
	resp, err := d.c.TimeToLive(ctx, clientv3.LeaseID(id), clientv3.WithAttachedKeys())
	if err != nil {
		return nil, fmt.Errorf("ask the keys of the shared lease: %w", err)
	}
	if resp.TTL < 0 {
		d.shared.ended(id)
		return nil, errLeaseGone
	}
	keys := make(map[string]bool, len(resp.Keys))
	for _, k := range resp.Keys {
		keys[string(k)] = true
	}
	return keys, nil
}

// readRecords reads the lock records of leases[i] for i in idx, batchReads
// per transaction, the transactions sent together.
func (d *store) readRecords(ctx context.Context, leases []fence.Lease, idx []int) (map[int][]*mvccpb.KeyValue, error) {
	out := make(map[int][]*mvccpb.KeyValue, len(idx))
	if len(idx) == 0 {
		return out, nil
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var first error
	for start := 0; start < len(idx); start += batchReads {
		part := idx[start:min(start+batchReads, len(idx))]
		wg.Go(func() {
			ops := make([]clientv3.Op, 0, len(part))
			for _, i := range part {
				ops = append(ops, clientv3.OpGet(d.held(leases[i].Key)))
			}
			resp, err := d.c.Txn(ctx).Then(ops...).Commit()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			for j, r := range resp.Responses {
				out[part[j]] = r.GetResponseRange().Kvs
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// adopt moves lease's record, found held on etcd lease other (not one of
// this Locker's), to this Locker's shared lease of its TTL: a put that
// keeps the record's create revision, if the record is still the lease's
// on that etcd lease.
func (d *store) adopt(ctx context.Context, lease fence.Lease, other int64, sent time.Time) error {
	secs := seconds(lease.TTL)
	for range 2 {
		id, at, err := d.groupLease(ctx, secs)
		if err != nil {
			return err
		}
		if at.Add(life(secs)).Before(sent.Add(lease.TTL)) {
			if err := d.keepAlive(ctx, id, secs); err != nil {
				if errors.Is(err, errLeaseGone) {
					continue
				}
				return err
			}
		}
		held, value := d.held(lease.Key), encodeRecord(lease.Owner)
		r := d.shared.begin(lease.Key, lease.Owner, id)
		resp, err := d.c.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(held), "=", int64(lease.Token)),
				clientv3.Compare(clientv3.Value(held), "=", value),
				clientv3.Compare(clientv3.LeaseValue(held), "=", other)).
			Then(clientv3.OpPut(held, value, clientv3.WithLease(clientv3.LeaseID(id)))).
			Commit()
		switch {
		case err != nil && etcdclient.Refused(err):
			d.shared.end(lease.Key, r, nil)
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				d.shared.ended(id)
				continue
			}
			return err
		case err != nil:
			d.shared.end(lease.Key, r, lost(lease.Owner, id, sent.Add(lease.TTL)))
			return err
		case !resp.Succeeded:
			d.shared.end(lease.Key, r, nil)
			return &fence.NotHeldError{Key: lease.Key, Reason: "the record changed during the renewal"}
		}
		d.shared.end(lease.Key, r, created(lease, id, sent.Add(lease.TTL)))
		return nil
	}
	return errors.New("the shared lease ended twice in a row")
}

// keepAliveMany keeps alive, on one stream, the etcd leases ids[i] for i
// in idx, of this Locker's shared leases found by reading the records,
// all requests sent before the first answer is read, and settles errs.
func (d *store) keepAliveMany(ctx context.Context, leases []fence.Lease, ids []int64, idx []int, errs []error, sent time.Time) {
	at := make(map[int64][]int) // etcd lease id -> indexes in leases
	for _, i := range idx {
		at[ids[i]] = append(at[ids[i]], i)
	}
	fail := func(err error) {
		for _, is := range at {
			for _, i := range is {
				errs[i] = err
			}
		}
	}
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := pb.NewLeaseClient(d.c.ActiveConnection()).LeaseKeepAlive(kctx)
	if err != nil {
		fail(fmt.Errorf("open a keepalive stream: %w", err))
		return
	}
	for id := range at {
		if err := stream.Send(&pb.LeaseKeepAliveRequest{ID: id}); err != nil {
			fail(fmt.Errorf("keep the lease alive: %w", err))
			return
		}
	}
	_ = stream.CloseSend()
	for range len(at) {
		resp, err := stream.Recv()
		if err != nil {
			fail(fmt.Errorf("keep the lease alive: %w", err))
			return
		}
		is, ok := at[resp.ID]
		if !ok {
			continue
		}
		delete(at, resp.ID)
		if resp.TTL <= 0 {
			d.shared.ended(resp.ID)
			for _, i := range is {
				errs[i] = errLeaseGone
			}
			continue
		}
		d.shared.refreshed(resp.ID, sent)
		for _, i := range is {
			d.renewed(leases[i], resp.ID, sent)
		}
	}
}
