package lockertest

import (
	"testing"
)

// breakCases test Locker.Break: it frees a key whoever holds it, the next
// token is higher than the broken holder's, and breaking a free or unknown
// key is not an error.
var breakCases = []testCase{
	{"FreesAHeldKey", func(t *testing.T, s *suite) {
		l, operator := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		breakKey(t, operator, lease.Key)
		s.wantFree(t, operator, lease)
		next := s.acquireAfter(t, operator, lease.Key, lease.Token, "a Break")
		s.wantHolder(t, l, next)
	}},
	{"UnknownKeyIsNotAnError", func(t *testing.T, s *suite) {
		l := s.locker(t)
		key := s.key(t)
		breakKey(t, l, key)
		breakKey(t, l, key)
		s.wantNeverAcquired(t, l, key)
		s.acquire(t, l, key, s.h.TTL, nil)
	}},
	{"FreeKeyIsNotAnError", func(t *testing.T, s *suite) {
		l, operator := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, lease)
		breakKey(t, operator, lease.Key)
		breakKey(t, operator, lease.Key)
		s.wantFree(t, operator, lease)
		s.acquireAfter(t, l, lease.Key, lease.Token, "a release and two Breaks")
	}},
	{"ExpiredKeyIsNotAnError", func(t *testing.T, s *suite) {
		l, operator := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		breakKey(t, operator, lease.Key)
		s.wantFree(t, operator, lease)
		s.acquireAfter(t, l, lease.Key, lease.Token, "an expiry and a Break")
	}},
}
