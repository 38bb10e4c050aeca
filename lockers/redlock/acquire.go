package redlock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// maxRounds bounds the rounds of one attempt: each round after the first
// proposes a token above every counter the round before reported, so a
// second round is refused only if counters rose meanwhile.
const maxRounds = 4

// cleanupTimeout bounds the deletes of what a failed attempt took, which
// run even when the caller's context has ended.
const cleanupTimeout = time.Second

// Acquire implements driver.Locker: attempts, retried after a split
// vote (see Options.RetryCount).
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	for retry := 0; ; retry++ {
		lease, split, err := d.attempt(ctx, key, owner, ttl)
		if !split || retry >= d.o.RetryCount {
			return lease, err
		}
		wait := time.NewTimer(rand.N(d.o.RetryDelay) + 1)
		select {
		case <-wait.C:
		case <-ctx.Done():
			wait.Stop()
			return fence.Lease{}, err
		}
	}
}

// propose returns the first token an attempt proposes: the clock in
// microseconds since 1970 (at least 1). Any value would be safe (a master
// refuses a proposal not above its counter); this one is above the
// counters of all earlier leases whenever they were proposed the same way
// by clocks that were behind this one, so one round suffices.
func propose(now time.Time) fence.Token {
	us := now.UnixMicro()
	switch {
	case us < 1:
		return 1
	case fence.Token(us) > maxToken:
		return maxToken
	}
	return fence.Token(us)
}

// attempt is one try at key: rounds of the lock script on every master,
// each with a higher proposal, until a quorum took it with one token or
// it cannot. split reports that no owner held a quorum but contenders
// took the masters apart, so that a retry may win.
func (d *store) attempt(ctx context.Context, key, owner string, ttl time.Duration) (lease fence.Lease, split bool, err error) {
	n := len(d.masters)
	keys := d.keys(key)
	ms := millis(ttl)
	start := d.o.Clock.Now()
	proposal := d.propose(start)
	// maybe holds the lock values each master may hold for this
	// attempt: those it took, and those whose answer was lost. Only
	// these are ever deleted or taken over: a value a master answered
	// "held" with is another lease's, even with this owner and token.
	maybe := make([][]string, n)
	prev := make([]fence.Token, n) // the token this attempt holds on each master, 0 if none
	defer func() {
		if err != nil {
			d.cleanup(ctx, key, maybe)
		}
	}()
	for range maxRounds {
		value := record{token: proposal, owner: owner}.String()
		replies := d.each(ctx, key, func(ctx context.Context, i int, c Client) *goredis.Cmd {
			p := ""
			if prev[i] != 0 {
				p = prev[i].String()
			}
			return lockScript.Run(ctx, c, keys, owner, ms, proposal.String(), p)
		})
		for i, r := range replies {
			if r.err != nil || r.kind == "ok" {
				maybe[i] = append(maybe[i], value)
			}
		}
		if err := corrupt(replies); err != nil {
			return fence.Lease{}, false, err
		}
		var taken, mine, free, answered int
		holders := map[string][]int64{} // other leases' lock values: their PTTLs
		highest := proposal
		for i, r := range replies {
			prev[i] = 0
			if r.err != nil {
				continue
			}
			answered++
			if r.ctr != "" {
				c, err := parseRecord(r.ctr)
				if err != nil {
					return fence.Lease{}, false, &fence.CorruptError{Key: key, Reason: "the counter record", Err: err}
				}
				highest = max(highest, c.token)
			}
			switch {
			case r.kind == "ok":
				taken++
				prev[i] = proposal
			case r.kind == "stale":
				free++
			case r.kind == "held" && slices.Contains(maybe[i], r.lock):
				// Ours from an earlier round whose answer was lost.
				lr, err := parseRecord(r.lock)
				if err != nil {
					return fence.Lease{}, false, &fence.CorruptError{Key: key, Reason: "the lock record", Err: err}
				}
				mine++
				prev[i] = lr.token
			case r.kind == "held":
				holders[r.lock] = append(holders[r.lock], r.pttl)
			}
		}
		if taken >= d.quorum {
			if left := d.validity(start, ttl); left <= 0 {
				return fence.Lease{}, false, fmt.Errorf("a quorum of masters took the lock %v after the request, leaving no validity of the %v TTL (drift %v)",
					d.o.Clock.Now().Sub(start), ttl, d.drift(ttl))
			}
			d.dropOlder(ctx, key, maybe, replies)
			return fence.Lease{Key: key, Owner: owner, Token: proposal}, false, nil
		}
		if taken+mine+free >= d.quorum && mine+free > 0 {
			if highest >= maxToken {
				return fence.Lease{}, false, fmt.Errorf("a counter reached the highest token, %d", maxToken)
			}
			proposal = highest + 1
			continue
		}
		for value, pttls := range holders {
			if len(pttls) < d.quorum {
				continue
			}
			h, err := parseRecord(value)
			if err != nil {
				return fence.Lease{}, false, &fence.CorruptError{Key: key, Reason: "the lock record", Err: err}
			}
			left := time.Duration(kthLargest(pttls, d.quorum)) * time.Millisecond
			return fence.Lease{}, false, &fence.HeldError{Key: key, Owner: h.owner, Token: h.token, ValidUntil: start.Add(left)}
		}
		if len(holders) > 0 {
			// Contenders hold the masters apart, or a holder holds a
			// quorum counting masters that did not answer.
			return fence.Lease{}, true, &fence.HeldError{Key: key}
		}
		return fence.Lease{}, false, d.quorumError("acquire", answered, replies)
	}
	return fence.Lease{}, false, fmt.Errorf("the masters' counters kept rising for %d rounds: %w", maxRounds, driver.ErrAcquireRaced)
}

// cleanup deletes, on every master, the locks a failed attempt may have
// set there (values, per master), with a context of its own: the
// caller's may have ended, and a lock left behind would block the key
// until it expires.
func (d *store) cleanup(ctx context.Context, key string, values [][]string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	keys := d.keys(key)
	d.each(ctx, key, func(ctx context.Context, i int, c Client) *goredis.Cmd {
		last := goredis.NewCmd(ctx)
		last.SetVal([]any{"ok"})
		for _, v := range slices.Compact(slices.Clone(values[i])) {
			last = releaseScript.Run(ctx, c, keys, v, d.channel, key)
		}
		return last
	})
}

// dropOlder deletes, after a successful attempt, the locks of its earlier
// rounds that may be left on masters that did not take the last round
// (an answer was lost), so that they do not block the key until they
// expire. A master that took the last round holds its lock only.
func (d *store) dropOlder(ctx context.Context, key string, maybe [][]string, last []reply) {
	left := make([][]string, len(maybe))
	some := false
	for i, values := range maybe {
		if last[i].kind != "ok" && len(values) > 1 {
			left[i] = values[:len(values)-1] // the last is the lease's
			some = true
		}
	}
	if some {
		d.cleanup(ctx, key, left)
	}
}
