package lockertest

import (
	"testing"
)

// inspectCases test Locker.Inspect: it describes a key without taking it;
// a free key keeps its last owner and token. (Every Inspect the suite
// makes is also checked for what LockInfo promises in any state.)
var inspectCases = []testCase{
	{"UnknownKey", func(t *testing.T, s *suite) {
		l := s.locker(t)
		key := s.key(t)
		s.wantNeverAcquired(t, l, key)
		s.wantNeverAcquired(t, l, key)
		s.acquire(t, l, key, s.h.TTL, nil) // Inspect did not take it
	}},
	{"HeldKey", func(t *testing.T, s *suite) {
		l := s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		s.wantHolder(t, l, lease)
		s.wantHolder(t, s.locker(t), lease)
	}},
	{"FreeKeyKeepsLastOwnerAndToken", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, lease)
		s.wantFree(t, other, lease)
		lease = s.acquireAfter(t, other, lease.Key, lease.Token, "a release")
		breakKey(t, l, lease.Key)
		s.wantFree(t, other, lease)
		short := s.acquire(t, l, lease.Key, s.h.ShortTTL, nil)
		s.inspect(t, other, lease.Key) // held or already expired: both are right
		s.h.Expire(t)
		s.wantFree(t, other, short) // Inspect did not extend the lease
		s.acquireAfter(t, other, lease.Key, short.Token, "an expiry")
	}},
}
