package lockertest

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// keyCases test that keys are independent locks: what happens to one key
// does not touch another, distinct keys never share a lock, and a key of
// exactly MaxKeyLen bytes works like any other.
var keyCases = []testCase{
	{"AreIndependent", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		a := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		b := s.acquire(t, other, s.key(t), s.h.TTL, nil) // holding a does not block b
		s.wantHolder(t, l, a)
		s.wantHolder(t, l, b)
		// A lease on a with b's owner and token is not b's lease.
		crossed := fence.Lease{Key: a.Key, Owner: b.Owner, Token: b.Token, TTL: b.TTL}
		if crossed.Token == a.Token {
			crossed.Token++
		}
		_, err := other.Renew(t.Context(), crossed)
		wantErr(t, err, fence.ErrNotHeld, "Renew of key a with b's owner")
		wantErr(t, other.Release(t.Context(), crossed), fence.ErrNotHeld, "Release of key a with b's owner")
		release(t, l, a)
		s.wantHolder(t, l, b)
		a = s.acquireAfter(t, l, a.Key, a.Token, "a release")
		breakKey(t, l, a.Key)
		s.wantHolder(t, l, b)
		s.renew(t, other, b)
	}},
	{"SimilarKeysDoNotShareALock", func(t *testing.T, s *suite) {
		// Keys a store might fold together: by case, Unicode
		// normalisation, trailing space, escaping, path cleaning, or
		// prefix and wildcard matching. A backend may refuse some with
		// ErrInvalid (its own key rules); those it accepts are distinct
		// locks.
		l := s.locker(t)
		base := s.key(t)
		variants := []string{
			base, base + "x", base + "-x", base + "_", base + "%", base + "*", base + " ",
			strings.ToUpper(base), base + "/x", base + "%2Fx", base + "%2fx", base + "\\x",
			base + "/", base + "//x", base + "/./x", base + "/../x", base + "\u00e9", base + "e\u0301",
			base + "'", base + `"`, base + ";", base + "\t", base + "\n", base + "😀",
		}
		var held []fence.Lease
		for _, key := range variants {
			before, _ := s.now()
			lease, err := l.Acquire(t.Context(), key, s.h.TTL, nil)
			after, _ := s.now()
			switch {
			case err == nil:
				s.checkLease(t, "Acquire", lease, key, s.h.TTL, before, after)
				held = append(held, lease)
			case errors.Is(err, fence.ErrInvalid) && key != base:
				t.Logf("the backend refuses key %q: %v", key, err)
			default:
				t.Fatalf("Acquire(%q), a distinct key from those taken before: %v", key, err)
			}
		}
		for _, lease := range held {
			s.wantHolder(t, l, lease)
		}
	}},
	{"LongestKeyWorks", func(t *testing.T, s *suite) {
		for _, wide := range []bool{false, true} {
			l, other := s.locker(t), s.locker(t)
			key := s.keyOfLen(t, s.h.MaxKeyLen, wide)
			lease := s.acquire(t, l, key, s.h.TTL, nil)
			s.wantHolder(t, other, lease)
			lease = s.renew(t, l, lease)
			release(t, l, lease)
			s.wantFree(t, other, lease)
			lease = s.acquireAfter(t, other, key, lease.Token, "a release")
			breakKey(t, l, key)
			s.wantFree(t, other, lease)
		}
	}},
}
