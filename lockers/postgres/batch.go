package postgres

import (
	"context"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.BatchRenewer = (*store)(nil)

// RenewBatch implements driver.BatchRenewer: one statement extends every
// lease of leases that its owner and token still hold unexpired, each by
// its own TTL, measured on the server, as Renew does for one. It returns
// nil for a lease extended and fence.ErrNotHeld for one that is not held
// (released, expired, broken or taken over); when the statement fails,
// its error for every lease (but those whose token exceeds a bigint, which
// were never issued and are not held). A lease given twice is renewed once and
// answered twice. An empty batch sends nothing.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	// The distinct storable leases, and where each of leases went.
	type id struct {
		key, owner string
		token      fence.Token
	}
	at := make(map[id]int, len(leases))
	slot := make([]int, len(leases))
	var keys, owners []string
	var tokens, ttls []int64
	for i, lease := range leases {
		if !storable(lease.Token) {
			slot[i] = -1
			continue
		}
		k := id{lease.Key, lease.Owner, lease.Token}
		j, seen := at[k]
		if !seen {
			j = len(keys)
			at[k] = j
			keys = append(keys, lease.Key)
			owners = append(owners, lease.Owner)
			tokens = append(tokens, int64(lease.Token))
			ttls = append(ttls, micros(lease.TTL))
		}
		slot[i] = j
	}
	renewed := make([]bool, len(keys))
	if len(keys) > 0 {
		var done []int64
		if err := d.db.queryRow(ctx, d.q.renewBatch, keys, owners, tokens, ttls).Scan(&done); err != nil {
			err = storeErr(err)
			for i, j := range slot {
				if errs[i] = err; j < 0 {
					errs[i] = fence.ErrNotHeld
				}
			}
			return errs
		}
		for _, n := range done {
			if n >= 1 && n <= int64(len(renewed)) {
				renewed[n-1] = true
			}
		}
	}
	for i, j := range slot {
		if j < 0 || !renewed[j] {
			errs[i] = fence.ErrNotHeld
		}
	}
	return errs
}
