package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// store is the driver.Locker over the masters: each method runs one
// script on every master at once and counts the answers. Its errors are
// bare causes; the *fence.Locker over it prefixes them.
type store struct {
	masters []Client
	quorum  int
	o       Options
	channel string // the release channel on every master
	notes   *notifier
	// propose returns an attempt's first proposal from its start time:
	// the package's propose; tests fix it to see tokens that only the
	// counters raise.
	propose func(time.Time) fence.Token
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
)

func newDriver(masters []Client, o Options) *store {
	d := &store{
		masters: append([]Client(nil), masters...),
		quorum:  len(masters)/2 + 1,
		o:       o,
		channel: o.Prefix + "released",
		propose: propose,
	}
	d.notes = newNotifier(d)
	return d
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "redlock", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
}

// As implements driver.Aser: it gives the masters' clients, in the order
// given to New (or of the URL), to a *[]Client. The slice is a copy.
func (d *store) As(target any) bool {
	if p, ok := target.(*[]Client); ok {
		*p = slices.Clone(d.masters)
		return true
	}
	return false
}

// keys returns the lock key and the counter key of key.
func (d *store) keys(key string) []string {
	return []string{d.o.Prefix + "lock:" + key, d.o.Prefix + "token:" + key}
}

// each runs call on every master at once, each with i, its index, and
// returns the replies in the masters' order once all have answered.
func (d *store) each(ctx context.Context, key string, call func(ctx context.Context, i int, c Client) *goredis.Cmd) []reply {
	out := make([]reply, len(d.masters))
	var wg sync.WaitGroup
	for i, c := range d.masters {
		wg.Go(func() {
			v, err := call(ctx, i, c).Result()
			out[i] = decode(key, v, err)
		})
	}
	wg.Wait()
	return out
}

// drift is the validity Redlock keeps back for clocks that run at other
// rates: TTL*DriftFactor plus 2 ms for the masters' expiry resolution.
func (d *store) drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*d.o.DriftFactor) + 2*time.Millisecond
}

// validity is what is left of a lease of ttl sent at start, now.
func (d *store) validity(start time.Time, ttl time.Duration) time.Duration {
	return ttl - d.o.Clock.Now().Sub(start) - d.drift(ttl)
}

// millis is ttl in whole milliseconds, rounded up, so that no master
// ends a lease before the TTL it was asked for.
func millis(ttl time.Duration) int64 {
	return int64((ttl + time.Millisecond - 1) / time.Millisecond)
}

// corrupt returns the first *fence.CorruptError among replies, if any.
func corrupt(replies []reply) error {
	for _, r := range replies {
		if ce, ok := errors.AsType[*fence.CorruptError](r.err); ok {
			return ce
		}
	}
	return nil
}

// quorumError says that too few masters answered, with their errors.
func (d *store) quorumError(what string, answered int, replies []reply) error {
	var errs []error
	for i, r := range replies {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("master %d: %w", i, r.err))
		}
	}
	return fmt.Errorf("%s: %d of %d masters answered, a quorum is %d: %w", what, answered, len(d.masters), d.quorum, errors.Join(errs...))
}

// kthLargest returns the k-th largest of ms (k >= 1, at most len(ms)), at
// least 1: the remaining milliseconds after which fewer than k of the
// masters that reported ms still hold their copy.
func kthLargest(ms []int64, k int) int64 {
	s := slices.Clone(ms)
	slices.Sort(s)
	return max(s[len(s)-k], 1)
}
