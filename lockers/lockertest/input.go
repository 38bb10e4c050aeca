package lockertest

import (
	"fmt"
	"testing"

	"github.com/fencekit/fence"
)

// inputCases test that bad input gets an error matching fence.ErrInvalid
// (a *fence.InvalidError) from every method, and changes nothing.
var inputCases = []testCase{
	{"BadKeys", func(t *testing.T, s *suite) {
		l := s.locker(t)
		n := s.h.MaxKeyLen
		keys := []struct{ name, key string }{
			{"empty", ""},
			{fmt.Sprintf("%d ASCII bytes", n+1), s.keyOfLen(t, n+1, false)},
			{fmt.Sprintf("%d bytes of fewer runes", n+1), s.keyOfLen(t, n+1, true)},
			{"invalid UTF-8", s.key(t) + "\xff\xfe"},
			{"a cut multi-byte rune", s.key(t) + "\xe5\x90"},
			{"a NUL byte", s.key(t) + "\x00x"},
		}
		for _, k := range keys {
			lease := fence.Lease{Key: k.key, Owner: fence.NewOwnerID(), Token: 1, TTL: s.h.TTL}
			_, err := l.Acquire(t.Context(), k.key, s.h.TTL, nil)
			wantInvalid(t, err, "Acquire of a key with "+k.name)
			_, err = l.Renew(t.Context(), lease)
			wantInvalid(t, err, "Renew of a lease on a key with "+k.name)
			wantInvalid(t, l.Release(t.Context(), lease), "Release of a lease on a key with "+k.name)
			wantInvalid(t, l.Break(t.Context(), k.key), "Break of a key with "+k.name)
			_, err = l.Inspect(t.Context(), k.key)
			wantInvalid(t, err, "Inspect of a key with "+k.name)
		}
		// Nothing was taken under a truncated key either.
		s.wantNeverAcquired(t, l, keys[1].key[:n])
	}},
	{"BadTTLs", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		holder := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		for _, ttl := range s.h.badTTLs() {
			key := s.key(t)
			_, err := l.Acquire(t.Context(), key, ttl, nil)
			wantInvalid(t, err, fmt.Sprintf("Acquire with TTL %v", ttl))
			s.wantNeverAcquired(t, other, key)
			bad := holder
			bad.TTL = ttl
			_, err = l.Renew(t.Context(), bad)
			wantInvalid(t, err, fmt.Sprintf("Renew of a held lease with its TTL set to %v", ttl))
			s.wantHolder(t, other, holder)
		}
		s.renew(t, l, holder)
	}},
	{"BadLeases", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		holder := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		noToken, noOwner := holder, holder
		noToken.Token = 0
		noOwner.Owner = ""
		for _, b := range []struct {
			name  string
			lease fence.Lease
		}{{"token 0", noToken}, {"an empty owner", noOwner}} {
			_, err := l.Renew(t.Context(), b.lease)
			wantInvalid(t, err, "Renew of the held lease with "+b.name)
			wantInvalid(t, l.Release(t.Context(), b.lease), "Release of the held lease with "+b.name)
			s.wantHolder(t, other, holder)
		}
		s.renew(t, l, holder)
	}},
}
