package objlock

import (
	"context"
	"errors"
)

// Break implements driver.Locker: it reads key's object and, when it
// holds a lease (running or expired), writes a free record that keeps the
// holder's owner and token under a precondition on the version read,
// so the next Acquire issues a higher token. When another write comes
// first it reads and tries again, until the write lands or ctx ends. A
// missing or free record is left as it is. A corrupted record is not
// written over: Break returns an error matching fence.ErrCorrupt.
func (d *Store) Break(ctx context.Context, key string) error {
	name, err := d.name(key)
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
		version, err := d.write(ctx, name, st.version, rec.encode())
		if err == nil {
			d.wrote(name, version, rec, sent)
			return nil
		}
		if !errors.Is(err, ErrConflict) || ctx.Err() != nil {
			return err
		}
	}
}
