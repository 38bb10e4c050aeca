package sqlite

import (
	"context"
	"encoding/json"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.BatchRenewer = (*store)(nil)

// RenewBatch implements driver.BatchRenewer: one statement extends every
// lease of leases that its owner and token still hold unexpired, each by
// its own TTL from the Clock's time of the statement, as Renew does for
// one. It returns nil for a lease extended and fence.ErrNotHeld for one
// that is not held (released, expired, broken or taken over); when the
// statement fails, its error for every lease (but those whose token
// exceeds the table's INTEGER, which were never issued and are not held).
// A lease given twice is renewed once and answered twice. An empty batch
// runs nothing.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	type id struct {
		key, owner string
		token      int64
	}
	// The distinct storable leases, as [key, owner, token, ttl] rows of
	// the statement's JSON parameter, and where each of leases went.
	at := make(map[id]int, len(leases))
	slot := make([]int, len(leases))
	rows := make([][4]any, 0, len(leases))
	for i, lease := range leases {
		if lease.Token > maxToken {
			slot[i] = -1
			continue
		}
		k := id{lease.Key, lease.Owner, int64(lease.Token)}
		j, seen := at[k]
		if !seen {
			j = len(rows)
			at[k] = j
			rows = append(rows, [4]any{lease.Key, lease.Owner, int64(lease.Token), int64(lease.TTL)})
		}
		slot[i] = j
	}
	renewed := make([]bool, len(rows))
	if len(rows) > 0 {
		err := d.ready(ctx)
		if err == nil {
			err = d.renewRows(ctx, rows, func(key, owner string, token int64) {
				if j, ok := at[id{key, owner, token}]; ok {
					renewed[j] = true
				}
			})
		}
		if err != nil {
			for i, j := range slot {
				if errs[i] = err; j < 0 {
					errs[i] = fence.ErrNotHeld
				}
			}
			return errs
		}
	}
	for i, j := range slot {
		if j < 0 || !renewed[j] {
			errs[i] = fence.ErrNotHeld
		}
	}
	return errs
}

// renewRows runs the renewBatch statement on rows and calls done with
// the key, owner and token of each row it extended.
func (d *store) renewRows(ctx context.Context, rows [][4]any, done func(key, owner string, token int64)) error {
	param, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	return retry(ctx, func() error {
		res, err := d.db.QueryContext(ctx, d.q.renewBatch, string(param), d.now())
		if err != nil {
			return err
		}
		defer res.Close()
		for res.Next() {
			var key, owner string
			var token int64
			if err := res.Scan(&key, &owner, &token); err != nil {
				return err
			}
			done(key, owner, token)
		}
		return res.Err()
	})
}
