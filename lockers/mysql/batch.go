package mysql

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.BatchRenewer = (*store)(nil)

// Limits of one RenewBatch statement: the server takes at most 65,535
// placeholders (three per lease) and packets of max_allowed_packet bytes
// (16 MB by default on MariaDB 10.11, 64 MB on MySQL 8).
const (
	renewBatchRows  = 10000
	renewBatchBytes = 4 << 20
)

// RenewBatch implements driver.BatchRenewer. On MariaDB, one statement
// renews every lease that has the same TTL (a Session's leases all do),
// up to 10,000 leases and 4 MB of keys and owners per statement: an
// INSERT .. ON DUPLICATE KEY UPDATE of the leases' rows that extends
// each lease its owner and token still hold unexpired, by its TTL
// measured on the server, and leaves every other row as it was, RETURNING
// the rows so that each lease's outcome is read from the statement's own
// answer. A row that is missing (deleted by hand) is created free with the
// lease's owner and token, so its tokens continue above the lease's. It
// returns nil for a lease extended and fence.ErrNotHeld for one not held
// (released, expired, broken or taken over); when a statement fails, its
// error for each of its leases. A lease given twice is renewed once and
// answered twice.
//
// On MySQL, which has no INSERT .. RETURNING, it renews the leases one
// Renew after another.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	if len(leases) == 0 {
		return errs
	}
	dia, err := d.dialect(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if dia != dialectMariaDB {
		for i, lease := range leases {
			errs[i] = d.Renew(ctx, lease)
		}
		return errs
	}

	// The distinct storable leases, in key order (so that two statements
	// that share rows lock them in the same order), grouped by TTL.
	type id struct {
		key, owner string
		token      int64
	}
	distinct := make(map[id]time.Duration, len(leases))
	for i, lease := range leases {
		if !storable(lease.Token) {
			errs[i] = fence.ErrNotHeld
			continue
		}
		distinct[id{lease.Key, lease.Owner, int64(lease.Token)}] = lease.TTL
	}
	ids := make([]id, 0, len(distinct))
	for k := range distinct {
		ids = append(ids, k)
	}
	slices.SortFunc(ids, func(a, b id) int {
		return cmp.Or(cmp.Compare(distinct[a], distinct[b]), strings.Compare(a.key, b.key),
			strings.Compare(a.owner, b.owner), cmp.Compare(a.token, b.token))
	})
	renewed := make(map[id]bool, len(ids))
	failed := make(map[id]error)
	for len(ids) > 0 {
		ttl := distinct[ids[0]]
		n, size := 0, 0
		for n < len(ids) && n < renewBatchRows && distinct[ids[n]] == ttl && (n == 0 || size+len(ids[n].key)+len(ids[n].owner) <= renewBatchBytes) {
			size += len(ids[n].key) + len(ids[n].owner)
			n++
		}
		chunk := ids[:n]
		ids = ids[n:]
		args := make([]any, 0, 3*len(chunk)+1)
		for _, k := range chunk {
			args = append(args, k.key, k.owner, k.token)
		}
		args = append(args, micros(ttl))
		start := time.Now()
		var got []id
		err := retry(ctx, "renew", func() error {
			got = got[:0]
			rows, err := d.db.QueryContext(ctx, d.renewBatchSQL(len(chunk)), args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var (
					k    id
					held bool
				)
				if err := rows.Scan(&k.key, &k.owner, &k.token, &held); err != nil {
					return err
				}
				if held {
					got = append(got, k)
				}
			}
			return rows.Err()
		})
		if err != nil {
			for _, k := range chunk {
				failed[k] = err
			}
			continue
		}
		for _, k := range got {
			renewed[k] = true
			if d.bells != nil {
				d.bells.extend(bellName(d.table, k.key), k.token, start.Add(ttl))
			}
		}
	}
	for i, lease := range leases {
		if errs[i] != nil {
			continue
		}
		k := id{lease.Key, lease.Owner, int64(lease.Token)}
		switch {
		case failed[k] != nil:
			errs[i] = failed[k]
		case !renewed[k]:
			errs[i] = fence.ErrNotHeld
		}
	}
	return errs
}

// renewBatchSQL is the statement of RenewBatch for n leases: n rows of
// key, owner and token, then the TTL in microseconds. A row is extended
// only when it has the lease's owner and token and is unexpired; the
// statement returns each row as it left it, with whether it is held.
func (d *store) renewBatchSQL(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + d.table + " (`key`, owner, token, expires_at) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, NULL)")
	}
	b.WriteString(`
ON DUPLICATE KEY UPDATE expires_at = IF(owner = VALUES(owner) AND token = VALUES(token) AND expires_at > UTC_TIMESTAMP(6),
	UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, expires_at)
RETURNING ` + "`key`" + `, owner, token, expires_at IS NOT NULL AND expires_at > UTC_TIMESTAMP(6)`)
	return b.String()
}
