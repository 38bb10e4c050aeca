package s3

import (
	"context"
	"errors"
)

// Break implements driver.Locker: it reads key's object and, when it
// holds a lease (running or expired), writes a free record that keeps the
// holder's owner and token under a precondition on the ETag read,
// so the next Acquire issues a higher token. When another write comes
// first it reads and tries again, until the write lands or ctx ends. A
// missing or free record is left as it is. A corrupted record is not
// written over: Break returns an error matching fence.ErrCorrupt.
func (d *store) Break(ctx context.Context, key string) error {
	name, err := d.objectKey(key)
	if err != nil {
		return err
	}
	for {
		st, err := d.look(ctx, key, name)
		if err != nil {
			return err
		}
		if !st.found || !st.rec.held {
			return nil
		}
		sent := d.clock.Now()
		rec := freed(st.rec)
		etag, err := d.store.write(ctx, name, st.etag, rec.encode())
		if err == nil {
			d.wrote(name, etag, rec, sent)
			return nil
		}
		if !errors.Is(err, errConflict) || ctx.Err() != nil {
			return err
		}
	}
}
