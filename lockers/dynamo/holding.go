package dynamo

import (
	"crypto/rand"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence/internal/clockfree"
)

// holding decides whether r, read at now on d's clock, is a lease still
// held, and until when on d's clock (zero where unknown), as
// clockfree.Mode.Holding judges it. In clock-free mode it notes the
// sighting in d's Observations first; a free item is forgotten.
func (d *store) holding(key string, r record, now time.Time) (held bool, until time.Time) {
	if !r.held {
		d.obs.Forget(d.table, key)
		return false, time.Time{}
	}
	s := clockfree.Sighting{Version: r.version, Held: true, TTL: r.lease, Expires: r.expires}
	if !d.mode.TrustedClock {
		return d.mode.Holding(s, d.obs.Note(d.table, key, s, now), now)
	}
	// The store compares whole milliseconds (see cut): a lease is taken
	// over once expires_ms + ceil(skew in ms) < now in ms, that is from
	// expires + ceil(skew) + 1ms on. Judging with that skew agrees with
	// the store's condition to the nanosecond.
	judge := clockfree.Mode{TrustedClock: true, MaxClockSkew: time.Duration(d.skewMillis()+1) * time.Millisecond}
	return judge.Holding(s, now, now)
}

// cut returns the stored expiry, in Unix milliseconds, before which a
// lease has expired at now in trusted-clock mode: expires + skew < now,
// in whole milliseconds rounded towards the later takeover.
func (d *store) cut(now time.Time) int64 {
	return now.UnixMilli() - d.skewMillis()
}

// skewMillis is the trusted-clock skew in whole milliseconds, rounded up.
func (d *store) skewMillis() int64 {
	return int64((d.mode.MaxClockSkew + time.Millisecond - 1) / time.Millisecond)
}

// newVersion returns a fresh random record version.
func newVersion() string { return rand.Text() }

// millis returns d in whole milliseconds, rounded up, as a number.
func millis(d time.Duration) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: itoa(int64((d + time.Millisecond - 1) / time.Millisecond))}
}

// expiry returns sent+ttl in Unix milliseconds, rounded up, as a number.
func expiry(sent time.Time, ttl time.Duration) types.AttributeValue {
	ns := sent.Add(ttl).UnixNano()
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) > 0 {
		ms++
	}
	return &types.AttributeValueMemberN{Value: itoa(ms)}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
