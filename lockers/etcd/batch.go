package etcd

import (
	"context"
	"fmt"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
)

// batchReads is the most lock records one transaction of RenewBatch
// reads; etcd refuses transactions of more than 128 operations by
// default (--max-txn-ops).
const batchReads = 100

// RenewBatch implements driver.BatchRenewer: it reads the lock records of
// all the leases in one transaction (one per batchReads leases), checks
// each as Renew does, and keeps the etcd leases of those still held alive
// on one keepalive stream, all requests sent before the first answer is
// read: two round trips for any number of leases.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	settled := make([]bool, len(leases))
	fail := func(err error) []error {
		for i := range errs {
			if !settled[i] {
				errs[i] = err
			}
		}
		return errs
	}
	ids := make([]int64, len(leases))
	for start := 0; start < len(leases); start += batchReads {
		end := min(start+batchReads, len(leases))
		ops := make([]clientv3.Op, 0, end-start)
		for _, l := range leases[start:end] {
			ops = append(ops, clientv3.OpGet(d.held(l.Key)))
		}
		resp, err := d.c.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return fail(err)
		}
		for j, r := range resp.Responses {
			i := start + j
			ids[i], errs[i] = d.check(leases[i], r.GetResponseRange().Kvs)
			settled[i] = errs[i] != nil
		}
	}
	at := make(map[int64]int) // etcd lease id -> index in leases
	for i, id := range ids {
		if errs[i] == nil {
			at[id] = i
		}
	}
	if len(at) == 0 {
		return errs
	}
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := pb.NewLeaseClient(d.c.ActiveConnection()).LeaseKeepAlive(kctx)
	if err != nil {
		return fail(fmt.Errorf("open a keepalive stream: %w", err))
	}
	sent := time.Now()
	for id := range at {
		if err := stream.Send(&pb.LeaseKeepAliveRequest{ID: id}); err != nil {
			return fail(fmt.Errorf("keep the lease alive: %w", err))
		}
	}
	_ = stream.CloseSend()
	for range len(at) {
		resp, err := stream.Recv()
		if err != nil {
			return fail(fmt.Errorf("keep the lease alive: %w", err))
		}
		i, ok := at[resp.ID]
		if !ok {
			continue
		}
		delete(at, resp.ID)
		settled[i] = true
		if resp.TTL <= 0 {
			d.leases.forget(resp.ID)
			errs[i] = &fence.NotHeldError{Key: leases[i].Key, Reason: "its etcd lease ended"}
			continue
		}
		d.leases.refreshed(resp.ID, resp.TTL, sent)
	}
	return errs
}
