// Package clustertest holds what the TestClusterLeaderKill of every locker
// on a replicated coordination service shares: holders that acquire, renew
// and release keys in a loop while the test kills the service's leader and
// starts it again, and the checks of the tokens they were issued.
//
// A test builds one Locker per holder (each through a client of its own, as
// another process would have), starts the holders, kills and restarts the
// leader its own way, telling the Run when, then stops the Run and checks:
//
//	r := clustertest.Start(t, lockers, clustertest.Options{Keys: []string{"a", "b"}, TTL: ttl})
//	time.Sleep(2 * time.Second)
//	kill()
//	r.Killed()
//	...
//	restart()
//	r.Restarted()
//	time.Sleep(3 * ttl)
//	r.Stop()
//	r.Check(t)
package clustertest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// Options of Start.
type Options struct {
	// Keys are the keys the holders take in turn.
	Keys []string
	// TTL is the TTL of every Acquire.
	TTL time.Duration
	// Long, when not empty, is a key that every fourth round of a holder
	// tries to take instead (held by a long holder of the test's own, see
	// CheckLong); the holder releases it at once when it wins.
	Long string
}

// Issued is a token a holder got, and when its Acquire started and ended.
type Issued struct {
	Token      fence.Token
	Start, End time.Time
	Holder     int
}

// Run is the holders of one test.
type Run struct {
	opts     Options
	mu       sync.Mutex
	got      map[string][]Issued
	longWins []time.Time // wins of Options.Long, when their Acquire returned
	phase    atomic.Int32
	wins     [3]atomic.Int32 // per phase: before the kill, after it, after the restart
	stopped  atomic.Bool
	wg       sync.WaitGroup
}

// Start starts one holder per Locker of lockers. Each one loops until
// Stop: it acquires a key of opts.Keys (in turn, starting from its
// index), with a fresh owner and a timeout of 2 s; on an error other than
// fence.ErrHeld it asks Inspect whether the attempt won the key all the
// same (its answer may have been lost) and records the token if so; on a
// win it records the token, renews the lease twice and releases it. The
// test's cleanup stops the holders if the test ends before Stop.
func Start(t *testing.T, lockers []*fence.Locker, opts Options) *Run {
	r := &Run{opts: opts, got: map[string][]Issued{}}
	t.Cleanup(r.Stop)
	for h, l := range lockers {
		r.wg.Go(func() { r.hold(h, l) })
	}
	return r
}

func (r *Run) hold(h int, l *fence.Locker) {
	keys, ttl := r.opts.Keys, r.opts.TTL
	for i := 0; !r.stopped.Load(); i++ {
		if r.opts.Long != "" && i%4 == 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			lease, err := l.Acquire(ctx, r.opts.Long, ttl, nil)
			cancel()
			if err == nil {
				r.mu.Lock()
				r.longWins = append(r.longWins, time.Now())
				r.mu.Unlock()
				_ = l.Release(context.Background(), lease)
			}
			continue
		}
		key := keys[(h+i)%len(keys)]
		owner := fence.NewOwnerID()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		lease, err := l.Acquire(ctx, key, ttl, &fence.AcquireOptions{Owner: owner})
		end := time.Now()
		cancel()
		if err != nil && !errors.Is(err, fence.ErrHeld) {
			// The answer may have been lost: a lease won by this attempt
			// shows its owner.
			ictx, icancel := context.WithTimeout(context.Background(), 2*time.Second)
			info, ierr := l.Inspect(ictx, key)
			icancel()
			if ierr == nil && info.Owner == owner {
				r.mu.Lock()
				r.got[key] = append(r.got[key], Issued{info.Token, start, time.Now(), h})
				r.mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		r.mu.Lock()
		r.got[key] = append(r.got[key], Issued{lease.Token, start, end, h})
		r.mu.Unlock()
		r.wins[r.phase.Load()].Add(1)
		for range 2 {
			rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
			lease, err = l.Renew(rctx, lease)
			rcancel()
			if err != nil {
				break
			}
		}
		if err == nil {
			rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = l.Release(rctx, lease)
			rcancel()
		}
	}
}

// Killed marks the acquisitions from now on as made after the kill.
func (r *Run) Killed() { r.phase.Store(1) }

// Restarted marks the acquisitions from now on as made after the restart.
func (r *Run) Restarted() { r.phase.Store(2) }

// Stop stops the holders and waits for them to return.
func (r *Run) Stop() {
	r.stopped.Store(true)
	r.wg.Wait()
}

// Check checks, after Stop, that acquisitions succeeded before the kill,
// after it and after the restart, and for each key: that at least 10
// tokens were issued, none twice, and every one higher than every token
// issued by an Acquire that had returned before this one started. It
// returns the tokens issued per key, in the order their Acquire started.
func (r *Run) Check(t *testing.T) map[string][]Issued {
	t.Helper()
	for p, what := range []string{"before the kill", "after the kill", "after the restart"} {
		t.Logf("%s: %d acquisitions", what, r.wins[p].Load())
		if r.wins[p].Load() == 0 {
			t.Errorf("no acquisition succeeded %s", what)
		}
	}
	for _, key := range r.opts.Keys {
		tokens := r.got[key]
		if len(tokens) < 10 {
			t.Errorf("key %q: only %d tokens issued", key, len(tokens))
		}
		seen := map[fence.Token]Issued{}
		for _, a := range tokens {
			if b, dup := seen[a.Token]; dup {
				t.Errorf("key %q: token %d issued twice (to holders %d and %d)", key, a.Token, b.Holder, a.Holder)
			}
			seen[a.Token] = a
		}
		// Acquisitions that did not overlap in time got tokens in their
		// order.
		slices.SortFunc(tokens, func(a, b Issued) int { return a.Start.Compare(b.Start) })
		for i, b := range tokens {
			for _, a := range tokens[:i] {
				if a.End.Before(b.Start) && a.Token >= b.Token {
					t.Errorf("key %q: token %d issued after token %d had been", key, b.Token, a.Token)
				}
			}
		}
		t.Logf("key %q: %d tokens", key, len(tokens))
	}
	return r.got
}

// HoldLong takes key with a fence.Session of its own on l, of lease
// duration ttl, renewing in the background until the test ends: the long
// holder that CheckLong checks.
func HoldLong(t *testing.T, l *fence.Locker, key string, ttl time.Duration) *fence.Handle {
	t.Helper()
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	held, err := s.Lock(t.Context(), key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// CheckLong checks, after Stop, the long holder's handle held of
// Options.Long: no holder got the key before the handle's lease had run
// out (the last ValidUntil its renewals gave it), and while the handle
// still holds it, no holder got it at all and l's Inspect shows it held
// with the handle's token. With mustKeep the handle must also not have
// lost its lease.
func (r *Run) CheckLong(t *testing.T, held *fence.Handle, l *fence.Locker, mustKeep bool) {
	t.Helper()
	until := held.Lease().ValidUntil
	lost := held.Err()
	t.Logf("long holder: error %v, valid until %v; %d contender wins", lost, until.Format(time.StampMilli), len(r.longWins))
	for _, w := range r.longWins {
		if w.Before(until) {
			t.Errorf("a contender got the long holder's key at %v, before its lease ran out at %v", w.Format(time.StampMilli), until.Format(time.StampMilli))
		}
	}
	if lost != nil {
		if mustKeep {
			t.Errorf("the long holder lost its lease across the failover: %v", lost)
		}
		return
	}
	if len(r.longWins) > 0 {
		t.Errorf("contenders got the key %d times while the long holder still held it", len(r.longWins))
	}
	info, err := l.Inspect(t.Context(), r.opts.Long)
	if err != nil || !info.Held || info.Token != held.Token() {
		t.Errorf("Inspect of the long holder's key = %+v, %v; want held with token %d", info, err, held.Token())
	}
}
