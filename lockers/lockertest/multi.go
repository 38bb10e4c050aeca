package lockertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// multiCases test Session.LockAll on the Locker (with driver.MultiAcquirer
// where the driver has it, one key at a time in order where not): all or
// nothing, one handle per key with its own key's token, no deadlock
// between crossing orders, and progress after a holder died holding part
// of a set.
var multiCases = []testCase{
	{"EachHandleHasItsOwnKeysToken", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		keys := []string{s.key(t) + "-c", s.key(t) + "-a", s.key(t) + "-b"}
		// Give the keys different histories, so their tokens differ.
		last := map[string]fence.Token{}
		for i, k := range keys {
			for range i + 1 {
				lease := s.acquire(t, other, k, s.h.TTL, nil)
				release(t, other, lease)
				last[k] = lease.Token
			}
		}
		hs := s.lockAll(t, l, keys, nil)
		for i, h := range hs {
			if h.Key() != keys[i] {
				t.Fatalf("LockAll(%q): handle %d is on %q; want the order of keys", keys, i, h.Key())
			}
			if h.Token() <= last[h.Key()] {
				t.Errorf("LockAll: %q got token %d; want more than its last token %d", h.Key(), h.Token(), last[h.Key()])
			}
			s.wantHolder(t, other, h.Lease())
		}
		for _, h := range hs {
			if err := h.Release(t.Context()); err != nil {
				t.Fatalf("Release(%q): %v", h.Key(), err)
			}
			s.wantFree(t, other, h.Lease())
		}
	}},
	{"AllOrNothing", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		keys := []string{s.key(t) + "-a", s.key(t) + "-b", s.key(t) + "-c", s.key(t) + "-d"}
		for busy := range keys {
			holder := s.acquire(t, other, keys[busy], s.h.TTL, nil)
			_, err := s.session(t, l).LockAll(t.Context(), keys, nil)
			wantErr(t, err, fence.ErrHeld, fmt.Sprintf("LockAll with %q held", keys[busy]))
			if he, ok := errors.AsType[*fence.HeldError](err); ok && he.Key != "" && he.Key != keys[busy] {
				t.Errorf("LockAll with %q held names %q busy", keys[busy], he.Key)
			}
			for i, k := range keys {
				info := s.inspect(t, other, k)
				switch {
				case i == busy && (!info.Held || info.Token != holder.Token):
					t.Fatalf("LockAll that failed changed the busy key %q: held %v token %d", k, info.Held, info.Token)
				case i != busy && info.Held:
					t.Fatalf("LockAll that failed on %q left %q held", keys[busy], k)
				}
			}
			release(t, other, holder)
		}
		if multiAcquirer(l) == nil {
			return
		}
		// One operation: a refused set leaves no key's token advanced.
		fresh := []string{s.key(t) + "-a", s.key(t) + "-b"}
		holder := s.acquire(t, other, fresh[1], s.h.TTL, nil)
		_, err := s.session(t, l).LockAll(t.Context(), fresh, nil)
		wantErr(t, err, fence.ErrHeld, "LockAll with the second key held")
		s.wantNeverAcquired(t, other, fresh[0])
		release(t, other, holder)
	}},
	{"RefusesDuplicatesAndNoKeys", func(t *testing.T, s *suite) {
		sess := s.session(t, s.locker(t))
		k := s.key(t)
		_, err := sess.LockAll(t.Context(), []string{k, s.key(t), k}, nil)
		wantInvalid(t, err, "LockAll with a key twice")
		_, err = sess.LockAll(t.Context(), nil, nil)
		wantInvalid(t, err, "LockAll of no key")
		_, err = sess.LockAll(t.Context(), []string{k, ""}, nil)
		wantInvalid(t, err, "LockAll with an empty key")
		s.wantNeverAcquired(t, s.locker(t), k)
	}},
	{"DriverTakesAllOrNone", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		m := multiAcquirer(l)
		if m == nil {
			t.Skip("the driver takes one key at a time (no driver.MultiAcquirer)")
		}
		keys := []string{s.key(t) + "-a", s.key(t) + "-b", s.key(t) + "-c"}
		prev := s.acquire(t, other, keys[0], s.h.TTL, nil)
		release(t, other, prev)
		holder := s.acquire(t, other, keys[2], s.h.TTL, nil)
		owners := []string{fence.NewOwnerID(), fence.NewOwnerID(), fence.NewOwnerID()}
		_, err := m.AcquireAll(t.Context(), keys, owners, s.h.TTL)
		if he, ok := errors.AsType[*fence.HeldError](err); !ok || (he.Key != "" && he.Key != keys[2]) {
			t.Fatalf("driver AcquireAll with %q held: %v; want a *fence.HeldError for it", keys[2], err)
		}
		if info := s.inspect(t, other, keys[0]); info.Held || info.Token != prev.Token {
			t.Fatalf("a refused AcquireAll changed %q: held %v, token %d (was %d)", keys[0], info.Held, info.Token, prev.Token)
		}
		s.wantNeverAcquired(t, other, keys[1])
		release(t, other, holder)
		leases, err := m.AcquireAll(t.Context(), keys, owners, s.h.TTL)
		if err != nil {
			t.Fatalf("driver AcquireAll of free keys: %v", err)
		}
		for i, lease := range leases {
			if lease.Key != keys[i] || lease.Owner != owners[i] {
				t.Fatalf("lease %d is on %q for another owner; want %q in order", i, lease.Key, keys[i])
			}
		}
		if leases[0].Token <= prev.Token || leases[2].Token <= holder.Token || !leases[1].Token.Valid() {
			t.Fatalf("AcquireAll tokens %d, %d, %d; want more than %d, any, more than %d", leases[0].Token, leases[1].Token, leases[2].Token, prev.Token, holder.Token)
		}
		_, err = m.AcquireAll(t.Context(), keys, []string{owners[0], fence.NewOwnerID(), fence.NewOwnerID()}, s.h.TTL)
		if !errors.Is(err, fence.ErrHeld) {
			t.Fatalf("driver AcquireAll of held keys (one by its own owner): %v; want an error matching fence.ErrHeld", err)
		}
		for i, lease := range leases {
			lease.TTL = s.h.TTL
			if err := driver.LockerOf(l).Release(t.Context(), lease); err != nil {
				t.Fatalf("driver Release of AcquireAll's lease %d: %v", i, err)
			}
		}
	}},
	{"WaitingTakesAllOnceFree", func(t *testing.T, s *suite) {
		l, other, third := s.locker(t), s.locker(t), s.locker(t)
		keys := []string{s.key(t) + "-a", s.key(t) + "-b"}
		holder := s.acquire(t, other, keys[1], s.h.TTL, nil)
		ctx, cancel := context.WithTimeout(t.Context(), patience)
		defer cancel()
		type result struct {
			hs  []*fence.Handle
			err error
		}
		done := make(chan result, 1)
		sess := s.session(t, l)
		go func() {
			hs, err := sess.LockAll(ctx, keys, &fence.LockOptions{Wait: fence.WaitForever})
			done <- result{hs, err}
		}()
		if multiAcquirer(l) != nil {
			// A waiting LockAll of one operation holds nothing: a third
			// owner can take and give back the free key meanwhile.
			lease := s.acquire(t, third, keys[0], s.h.TTL, nil)
			release(t, third, lease)
		}
		release(t, other, holder)
		r := <-done
		if r.err != nil {
			t.Fatalf("LockAll waiting for %q: %v", keys[1], r.err)
		}
		for _, h := range r.hs {
			s.wantHolder(t, third, h.Lease())
			_ = h.Release(t.Context())
		}
	}},
	{"CrossingOrdersNeverDeadlock", func(t *testing.T, s *suite) {
		keys := []string{s.key(t) + "-a", s.key(t) + "-b", s.key(t) + "-c"}
		orders := [][]string{keys, {keys[2], keys[1], keys[0]}, {keys[1], keys[2], keys[0]}}
		ctx, cancel := context.WithTimeout(t.Context(), 2*patience)
		defer cancel()
		var inside atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, len(orders))
		const rounds = 5
		for _, order := range orders {
			sess := s.session(t, s.locker(t))
			wg.Go(func() {
				for range rounds {
					hs, err := sess.LockAll(ctx, order, &fence.LockOptions{Wait: fence.WaitForever})
					if err != nil {
						errs <- fmt.Errorf("LockAll(%q): %w", order, err)
						return
					}
					if n := inside.Add(1); n != 1 {
						errs <- fmt.Errorf("%d holders of all keys at once", n)
					}
					time.Sleep(time.Millisecond)
					inside.Add(-1)
					for _, h := range hs {
						if err := h.Release(ctx); err != nil {
							errs <- fmt.Errorf("Release(%q): %w", h.Key(), err)
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}},
	{"ProgressAfterAHolderDiedMidSet", func(t *testing.T, s *suite) {
		l, crashed := s.locker(t), s.locker(t)
		keys := []string{s.key(t) + "-a", s.key(t) + "-b", s.key(t) + "-c"}
		// A holder took the first key of the set and died before the
		// rest: its lease is never renewed nor released.
		dead := s.acquire(t, crashed, keys[0], s.h.ShortTTL, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 2*patience)
		defer cancel()
		done := make(chan error, 1)
		var hs []*fence.Handle
		sess := s.session(t, l)
		go func() {
			var err error
			hs, err = sess.LockAll(ctx, keys, &fence.LockOptions{Wait: fence.WaitForever})
			done <- err
		}()
		s.h.Expire(t)
		if err := <-done; err != nil {
			t.Fatalf("LockAll after the holder of %q died: %v", keys[0], err)
		}
		if hs[0].Token() <= dead.Token {
			t.Fatalf("LockAll took %q with token %d; want more than the dead holder's %d", keys[0], hs[0].Token(), dead.Token)
		}
		for _, h := range hs {
			_ = h.Release(t.Context())
		}
	}},
}

// lockAll takes keys through a new session over l and checks it got one
// handle per key.
func (s *suite) lockAll(t *testing.T, l *fence.Locker, keys []string, opts *fence.LockOptions) []*fence.Handle {
	t.Helper()
	hs, err := s.session(t, l).LockAll(t.Context(), keys, opts)
	if err != nil {
		t.Fatalf("LockAll(%q): %v", keys, err)
	}
	if len(hs) != len(keys) {
		t.Fatalf("LockAll of %d keys returned %d handles", len(keys), len(hs))
	}
	return hs
}

// session returns a session over l with the harness's TTL, closed when
// the test ends.
func (s *suite) session(t *testing.T, l *fence.Locker) *fence.Session {
	t.Helper()
	sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: s.h.TTL})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close(context.WithoutCancel(t.Context())) })
	return sess
}

// multiAcquirer returns the driver under l as a driver.MultiAcquirer, or
// nil.
func multiAcquirer(l *fence.Locker) driver.MultiAcquirer {
	m, _ := driver.LockerOf(l).(driver.MultiAcquirer)
	return m
}
