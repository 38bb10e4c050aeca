package dynamo

import (
	"crypto/rand"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// holding decides whether r, read at now on l's clock, is a lease still
// held, and until when on l's clock (zero where unknown). In clock-free
// mode it records the observation.
func (l *Locker) holding(key string, r record, now time.Time) (held bool, until time.Time) {
	if !r.held {
		l.obs.forget(l.table, key)
		return false, time.Time{}
	}
	if l.trusted {
		if r.expires.UnixMilli() < l.cut(now) {
			return false, time.Time{}
		}
		// The stored expiry is on the writer's clock; the lease cannot
		// outlast a full duration from when it was read either.
		until = r.expires
		if limit := now.Add(r.lease); until.After(limit) {
			until = limit
		}
		if !until.After(now) {
			until = time.Time{} // within the skew allowance
		}
		return true, until
	}
	since := l.obs.note(l.table, key, r.version, r.lease, now)
	until = since.Add(r.lease)
	if !until.After(now) {
		return false, time.Time{}
	}
	return true, until
}

// cut returns the stored expiry, in Unix milliseconds, before which a
// lease has expired at now in trusted-clock mode: expires + skew < now,
// in whole milliseconds rounded towards the later takeover.
func (l *Locker) cut(now time.Time) int64 {
	return now.UnixMilli() - int64((l.skew+time.Millisecond-1)/time.Millisecond)
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
