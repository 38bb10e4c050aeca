package lockertest

import (
	"testing"
)

// restartCase tests that tokens keep increasing across a restart of the
// store, for a key that was held and for one that was free. Whether a
// lease survives the restart is the backend's business, so the held key
// is broken before it is taken again.
func restartCase(t *testing.T, s *suite) {
	if s.h.Restart == nil {
		t.Skip("Harness.Restart is nil")
	}
	l := s.locker(t)
	held := s.acquire(t, l, s.key(t), s.h.TTL, nil)
	free := s.acquire(t, l, s.key(t), s.h.TTL, nil)
	release(t, l, free)
	s.h.Restart(t)
	l = s.locker(t)
	s.acquireAfter(t, l, free.Key, free.Token, "a release and a restart of the store")
	breakKey(t, l, held.Key)
	s.acquireAfter(t, l, held.Key, held.Token, "a restart of the store and a Break")
}
