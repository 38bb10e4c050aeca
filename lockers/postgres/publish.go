package postgres

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// codeUndefinedColumn is SQLSTATE undefined_column: the lease table was
// made without the value columns.
const codeUndefinedColumn = "42703"

// Publish implements driver.Publisher: one conditional UPDATE that sets
// the value of the lease, in base64, with the lease's token beside it,
// if the row still has the lease's owner and token and has not expired,
// and notifies the key's waiters as Release does. On a lease table made
// without the value columns it returns an error that says to run Create,
// matching fence.ErrStoreMissing.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	if !storable(lease.Token) {
		return fence.ErrNotHeld
	}
	payload, slot := keyNotice(lease.Key)
	n, err := d.db.exec(ctx, d.q.publish, lease.Key, lease.Owner, int64(lease.Token),
		base64.StdEncoding.EncodeToString([]byte(value)), payload, slot)
	if sqlState(err) == codeUndefinedColumn {
		return fmt.Errorf("the lease table %s has no value column (it was made by an earlier version); run Create (fence.Locker.Create, or `fence create`) to add it: %w",
			d.table.Sanitize(), driver.StoreMissing(err))
	}
	if err != nil {
		return storeErr(err)
	}
	if n != 1 {
		return fence.ErrNotHeld
	}
	return nil
}

// decodeValue returns the published value of key's row from the value
// column's text (NULL: none), or a *fence.CorruptError when it is not
// base64 of at most fence.MaxValueLen bytes.
func decodeValue(key string, v pgtype.Text) (string, error) {
	if !v.Valid {
		return "", nil
	}
	b, err := base64.StdEncoding.DecodeString(v.String)
	if err != nil {
		return "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value is not base64: %v", err)}
	}
	if len(b) > fence.MaxValueLen {
		return "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value holds %d bytes, more than %d", len(b), fence.MaxValueLen)}
	}
	return string(b), nil
}
