package lockertest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// acquireCases test Locker.Acquire: it tries once, never waits, and of
// many contenders exactly one wins. (A backend that waited for a held key
// would hang these cases: their holders keep the key for TTL.)
var acquireCases = []testCase{
	{"ReturnsAValidLease", func(t *testing.T, s *suite) {
		l := s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		s.wantHolder(t, s.locker(t), lease)
	}},
	{"HeldKeyFailsWithHeldError", func(t *testing.T, s *suite) {
		holder := s.acquire(t, s.locker(t), s.key(t), s.h.TTL, nil)
		other := s.locker(t)
		s.wantHeldBy(t, other, holder, nil)
		s.wantHeldBy(t, other, holder, &fence.AcquireOptions{Owner: fence.NewOwnerID()})
	}},
	{"RetryBySameOwnerWhileHeldFails", func(t *testing.T, s *suite) {
		// A retry of an ambiguous Acquire with the same owner id loses
		// to the first attempt instead of issuing a second token; the
		// caller recognises its own owner id with Inspect.
		opts := &fence.AcquireOptions{Owner: fence.NewOwnerID()}
		holder := s.acquire(t, s.locker(t), s.key(t), s.h.TTL, opts)
		s.wantHeldBy(t, s.locker(t), holder, opts)
		s.wantHolder(t, s.locker(t), holder)
	}},
	{"FailedAttemptsIssueNoToken", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		holder := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		for range 3 {
			s.wantHeldBy(t, other, holder, nil)
		}
		s.wantHolder(t, other, holder) // Inspect still shows the holder's token
		holder = s.renew(t, l, holder)
		release(t, l, holder)
		s.wantFree(t, other, holder)
	}},
	{"OwnerOptionIsHonoured", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		key := s.key(t)
		opts := &fence.AcquireOptions{Owner: "lt-owner-" + s.run}
		first := s.acquire(t, l, key, s.h.TTL, opts)
		s.wantHolder(t, other, first)
		release(t, l, first)
		s.wantFree(t, other, first)
		second := s.acquire(t, l, key, s.h.TTL, opts)
		if second.Token <= first.Token {
			t.Fatalf("Acquire(%q) by the same owner after release returned token %d; want more than %d", key, second.Token, first.Token)
		}
		s.wantHolder(t, other, second)
	}},
	{"DefaultOwnersAreFreshAndUnique", func(t *testing.T, s *suite) {
		l := s.locker(t)
		k1, k2 := s.key(t), s.key(t)
		seen := map[string]string{}
		note := func(lease fence.Lease, how string) {
			t.Helper()
			if prev, dup := seen[lease.Owner]; dup {
				t.Fatalf("Acquire %s returned owner %q, the default owner of Acquire %s too", how, lease.Owner, prev)
			}
			seen[lease.Owner] = how
		}
		a := s.acquire(t, l, k1, s.h.TTL, nil)
		note(a, "of key 1 with nil options")
		note(s.acquire(t, l, k2, s.h.TTL, &fence.AcquireOptions{}), "of key 2 with empty options")
		release(t, l, a)
		note(s.acquire(t, l, k1, s.h.TTL, nil), "of key 1 again after release, by the same Locker")
		note(s.acquire(t, s.locker(t), s.key(t), s.h.TTL, nil), "of key 3 by another Locker")
	}},
	{"OneWinnerAmongContenders", func(t *testing.T, s *suite) {
		key := s.key(t)
		lockers := make([]*fence.Locker, s.h.contenders())
		for i := range lockers {
			lockers[i] = s.locker(t)
		}
		var win fence.Lease
		var at int // index of the winner's Locker
		rounds := []struct {
			name string
			free func(t *testing.T) fence.Token // frees the key; returns the last token issued
		}{
			{"FreshKey", func(t *testing.T) fence.Token { return 0 }},
			{"AfterRelease", func(t *testing.T) fence.Token {
				release(t, lockers[at], win)
				return win.Token
			}},
			{"AfterBreak", func(t *testing.T) fence.Token {
				breakKey(t, lockers[(at+1)%len(lockers)], key)
				return win.Token
			}},
			{"AfterExpiry", func(t *testing.T) fence.Token {
				release(t, lockers[at], win)
				short := s.acquire(t, lockers[0], key, s.h.ShortTTL, nil)
				s.h.Expire(t)
				return short.Token
			}},
		}
		for _, r := range rounds {
			ok := t.Run(r.name, func(t *testing.T) {
				prev := r.free(t)
				win, at = s.race(t, lockers, key)
				if win.Token <= prev {
					t.Fatalf("the winner's token is %d; want more than the last one issued, %d", win.Token, prev)
				}
			})
			if !ok {
				return
			}
		}
	}},
	{"MutualExclusionUnderChurn", func(t *testing.T, s *suite) {
		// Contenders take and release one key in a loop. Between a
		// successful Acquire and its Release, nobody else may succeed,
		// so the tokens, in the order their holders got in, strictly
		// increase.
		key := s.key(t)
		const attempts = 20
		var (
			inside   atomic.Int32
			mu       sync.Mutex
			tokens   []fence.Token
			problems []string
			wg       sync.WaitGroup
		)
		report := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		for range max(2, s.h.contenders()/4) {
			l := s.locker(t)
			wg.Go(func() {
				for range attempts {
					lease, err := l.Acquire(t.Context(), key, s.h.TTL, nil)
					if errors.Is(err, fence.ErrHeld) {
						continue
					}
					if err != nil {
						report("Acquire: %v", err)
						return
					}
					if n := inside.Add(1); n != 1 {
						report("Acquire succeeded with token %d while %d other leases were held", lease.Token, n-1)
					}
					mu.Lock()
					if n := len(tokens); n > 0 && lease.Token <= tokens[n-1] {
						problems = append(problems, fmt.Sprintf("token %d was issued after token %d", lease.Token, tokens[n-1]))
					}
					tokens = append(tokens, lease.Token)
					mu.Unlock()
					inside.Add(-1)
					if err := l.Release(t.Context(), lease); err != nil {
						report("Release of token %d: %v", lease.Token, err)
						return
					}
				}
			})
		}
		wg.Wait()
		for _, p := range problems {
			t.Error(p)
		}
		if len(tokens) == 0 {
			t.Error("no contender ever acquired the key")
		}
		t.Logf("%d acquisitions", len(tokens))
	}},
}

// race makes every Locker in lockers try to take key at once, with TTL,
// and checks that exactly one wins and every other loses to it with an
// error matching fence.ErrHeld. It returns the winner's lease and the
// index of its Locker.
func (s *suite) race(t *testing.T, lockers []*fence.Locker, key string) (fence.Lease, int) {
	t.Helper()
	type result struct {
		lease         fence.Lease
		err           error
		before, after time.Time
	}
	results := make([]result, len(lockers))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, l := range lockers {
		wg.Go(func() {
			r := &results[i]
			<-start
			r.before, _ = s.now()
			r.lease, r.err = l.Acquire(t.Context(), key, s.h.TTL, nil)
			r.after, _ = s.now()
		})
	}
	close(start)
	wg.Wait()
	var winners []int
	for i, r := range results {
		if r.err == nil {
			winners = append(winners, i)
		}
	}
	if len(winners) != 1 {
		for _, i := range winners {
			t.Logf("contender %d won with owner %q and token %d", i, results[i].lease.Owner, results[i].lease.Token)
		}
		t.Fatalf("%d of %d contenders acquired %q; want exactly 1", len(winners), len(lockers), key)
	}
	w := results[winners[0]]
	s.checkLease(t, "Acquire", w.lease, key, s.h.TTL, w.before, w.after)
	for i, r := range results {
		if i == winners[0] {
			continue
		}
		if msg := s.checkHeldError(r.err, key, w.lease, r.before, r.after); msg != "" {
			t.Errorf("contender %d lost with %v: %s", i, r.err, msg)
		}
	}
	return w.lease, winners[0]
}
