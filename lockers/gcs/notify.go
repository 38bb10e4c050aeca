package gcs

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// NotifyRelease implements driver.ReleaseNotifier by probing (see the
// package doc, "Waiting"): while a Session.Lock of this Locker waits for
// key, its object's metadata is read every Options.ProbeInterval, and the
// waiter is woken when the record shows the lease released, broken, taken
// over or run out for this Locker. With probes off it returns an error
// matching errors.ErrUnsupported, and waiters poll.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if d.probe == nil {
		return nil, nil, errors.ErrUnsupported
	}
	return d.probe.Notify(ctx, key)
}

// probeRead is the probe of key: one metadata read on the condition that
// the generation changed since prev (Cloud Storage answers 304 Not
// Modified, without a body, when it did not), and a read of the record
// when it did. What it reads is recorded, as by Acquire.
func (d *store) probeRead(ctx context.Context, key string, prev probe.Reading) (probe.Reading, error) {
	name, err := d.objectName(key)
	if err != nil {
		return probe.Reading{}, err
	}
	if prev.Version != "" {
		gen, _ := strconv.ParseInt(prev.Version, 10, 64)
		attrs, err := d.store.handle(name).If(storage.Conditions{GenerationNotMatch: gen}).Attrs(ctx)
		switch {
		case notModified(err), err == nil && attrs.Generation == gen:
			return prev, nil
		case errors.Is(err, storage.ErrObjectNotExist):
			return probe.Reading{}, nil
		case err != nil:
			return probe.Reading{}, err
		}
	}
	st, err := d.look(ctx, key, name)
	if err != nil || !st.found {
		return probe.Reading{}, err
	}
	r := probe.Reading{Version: strconv.FormatInt(st.gen, 10)}
	if st.rec.held {
		r.Holder = st.rec.owner + " " + st.rec.token.String()
		r.Ends = d.mode.Ends(clockfree.Sighting{Held: true, TTL: st.rec.ttl, Expires: st.rec.expires}, st.since)
	}
	return r, nil
}

// notModified reports whether err is Cloud Storage's 304 Not Modified.
func notModified(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotModified
}
