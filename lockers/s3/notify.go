package s3

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// NotifyRelease implements driver.ReleaseNotifier by probing (see the
// package doc, "Waiting"): while a Session.Lock of this Locker waits for
// key, its object is probed with a HEAD request every
// Options.ProbeInterval, and the waiter is woken when the record shows the
// lease released, broken, taken over or run out for this Locker. With
// probes off it returns an error matching errors.ErrUnsupported, and
// waiters poll.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if d.probe == nil {
		return nil, nil, errors.ErrUnsupported
	}
	return d.probe.Notify(ctx, key)
}

// probeRead is the probe of key: one HEAD request on the condition that
// the ETag changed since prev (If-None-Match: S3 answers 304 Not
// Modified when it did not), and a read of the record when it did. What
// it reads is recorded, as by Acquire.
func (d *store) probeRead(ctx context.Context, key string, prev probe.Reading) (probe.Reading, error) {
	name, err := d.objectKey(key)
	if err != nil {
		return probe.Reading{}, err
	}
	if prev.Version != "" {
		out, err := d.store.client.HeadObject(ctx, &s3.HeadObjectInput{
			Bucket: aws.String(d.store.bucket), Key: aws.String(name), IfNoneMatch: aws.String(prev.Version),
		}, once)
		switch {
		case statusOf(err) == 304, err == nil && aws.ToString(out.ETag) == prev.Version:
			return prev, nil
		case statusOf(err) == 404:
			return probe.Reading{}, nil
		case err != nil:
			return probe.Reading{}, err
		}
	}
	st, err := d.look(ctx, key, name)
	if err != nil || !st.found {
		return probe.Reading{}, err
	}
	r := probe.Reading{Version: st.etag}
	if st.rec.held {
		r.Holder = st.rec.owner + " " + st.rec.token.String()
		r.Ends = d.mode.Ends(clockfree.Sighting{Held: true, TTL: st.rec.ttl, Expires: st.rec.expires}, st.since)
	}
	return r, nil
}
