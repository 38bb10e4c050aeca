package etcd

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// sweepOps is the most records one sweep transaction deletes.
const sweepOps = 50

// sweepTimeout bounds a sweep's transactions.
const sweepTimeout = 10 * time.Second

// sweep deletes the records of this Locker whose own end passed (nobody
// renewed them within their TTL), while their shared etcd lease may live
// on for other records: compare-and-delete, each record only if it is
// still the one the Locker knows on that etcd lease (its token, or its
// owner after a lost answer). It runs on a timer armed for the earliest
// end, and arms itself again.
func (d *store) sweep() {
	due := d.shared.due()
	if len(due) == 0 {
		return
	}
	if d.c.Ctx().Err() != nil {
		return // the client is closed: the server expires the leases
	}
	keys := make([]string, 0, len(due))
	for k := range due {
		keys = append(keys, k)
	}
	failed := false
	for start := 0; start < len(keys); start += sweepOps {
		part := keys[start:min(start+sweepOps, len(keys))]
		ops := make([]clientv3.Op, 0, len(part))
		for _, k := range part {
			r, held := due[k], d.held(k)
			cmps := []clientv3.Cmp{clientv3.Compare(clientv3.LeaseValue(held), "=", r.lease)}
			if r.unsure {
				cmps = append(cmps, clientv3.Compare(clientv3.Value(held), "=", encodeRecord(r.owner)))
			} else {
				cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(held), "=", int64(r.token)))
			}
			ops = append(ops, clientv3.OpTxn(cmps, []clientv3.Op{clientv3.OpDelete(held)}, nil))
		}
		ctx, cancel := context.WithTimeout(d.c.Ctx(), sweepTimeout)
		_, err := d.c.Txn(ctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			failed = true
			continue
		}
		for _, k := range part {
			d.shared.swept(k, due[k].seq)
		}
	}
	if failed && d.c.Ctx().Err() == nil {
		d.shared.retry()
	}
}
