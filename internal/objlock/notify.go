package objlock

import (
	"context"
	"errors"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

var (
	_ driver.ReleaseNotifier = (*Store)(nil)
	_ driver.Publisher       = (*Store)(nil)
)

// NotifyRelease implements driver.ReleaseNotifier by probing (see the
// package doc, "Waiting"): while a Session.Lock of this Locker waits for
// key, its object is probed (Bucket.Probe) every
// Config.ProbeInterval, and the waiter is woken when the record shows the
// lease released, broken, taken over or run out for this Locker. With
// probes off it returns an error matching errors.ErrUnsupported, and
// waiters poll.
func (d *Store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if d.probe == nil {
		return nil, nil, errors.ErrUnsupported
	}
	return d.probe.Notify(ctx, key)
}

// probeRead is the probe of key: one Bucket.Probe of whether the version
// changed since prev, and a read of the record when it did. What
// it reads is recorded, as by Acquire.
func (d *Store) probeRead(ctx context.Context, key string, prev probe.Reading) (probe.Reading, error) {
	name, err := d.name(key)
	if err != nil {
		return probe.Reading{}, err
	}
	if prev.Version != "" {
		switch change, err := d.bucket.Probe(ctx, name, prev.Version); {
		case err != nil:
			return probe.Reading{}, err
		case change == Same:
			return prev, nil
		case change == Gone:
			return probe.Reading{}, nil
		}
	}
	st, err := d.look(ctx, key, name)
	if err != nil || !st.found {
		return probe.Reading{}, err
	}
	r := probe.Reading{Version: st.version}
	if st.rec.held {
		r.Holder = st.rec.owner + " " + st.rec.token.String()
		r.Ends = d.mode.Ends(clockfree.Sighting{Held: true, TTL: st.rec.ttl, Expires: st.rec.expires}, st.since)
		r.Value = st.rec.value
	}
	return r, nil
}
