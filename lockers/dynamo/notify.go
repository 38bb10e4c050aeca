package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// NotifyRelease implements driver.ReleaseNotifier by probing (see the
// package doc, "Waiting"): while a Session.Lock of this Locker waits for
// key, its item is read every Options.ProbeInterval, and the waiter is
// woken when the item shows the lease released, broken, taken over or
// run out for this Locker. With probes off it returns an error matching
// errors.ErrUnsupported, and waiters poll.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if d.probe == nil {
		return nil, nil, errors.ErrUnsupported
	}
	return d.probe.Notify(ctx, key)
}

// probeRead is the probe of key: one consistent GetItem of the lease's
// attributes and its value (one read unit for any lease item). In
// clock-free mode it records what it saw, like a failed Acquire. A
// Publish changes the value, not the version: the reading's Value tells
// the Prober.
func (d *store) probeRead(ctx context.Context, key string, _ probe.Reading) (probe.Reading, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(d.table),
		Key:                      d.itemKey(key),
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#o, #t, #v, #l, #e, #h, #pv, #pt"),
		ExpressionAttributeNames: d.names("#o", "#t", "#v", "#l", "#e", "#h", "#pv", "#pt"),
	})
	if err != nil {
		return probe.Reading{}, sdkError("GetItem", err)
	}
	now := d.clock.Now()
	r, found, err := parseItem(key, out.Item)
	switch {
	case err != nil:
		return probe.Reading{}, err
	case !found:
		return probe.Reading{}, nil
	}
	d.holding(key, r, now)
	reading := probe.Reading{Version: r.version}
	if r.held {
		reading.Holder = r.owner + " " + r.token.String()
		reading.Ends = d.ends(key, r, now)
		if reading.Value, err = parseValue(key, out.Item, r.token); err != nil {
			return probe.Reading{}, err
		}
	}
	return reading, nil
}

// ends returns when the lease of r, held and read at now, ends for d: when
// an Acquire's condition lets d take it over.
func (d *store) ends(key string, r record, now time.Time) time.Time {
	s := clockfree.Sighting{Version: r.version, Held: true, TTL: r.lease, Expires: r.expires}
	if d.mode.TrustedClock {
		// As holding judges: the store compares whole milliseconds.
		judge := clockfree.Mode{TrustedClock: true, MaxClockSkew: time.Duration(d.skewMillis()+1) * time.Millisecond}
		return judge.Ends(s, now)
	}
	last, since, ok := d.obs.Last(d.table, key)
	if !ok || last.Version != r.version {
		since = now
	}
	return d.mode.Ends(s, since)
}
