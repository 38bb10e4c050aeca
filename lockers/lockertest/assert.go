package lockertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// The helpers below make one call, check everything the contract says
// about its answer, and fail the test with the call in the message. They
// run on the test's goroutine only; racing goroutines collect their
// results and the case checks them after the race.

// acquire takes key with l and checks the lease it gets.
func (s *suite) acquire(t *testing.T, l *fence.Locker, key string, ttl time.Duration, opts *fence.AcquireOptions) fence.Lease {
	t.Helper()
	before, _ := s.now()
	lease, err := l.Acquire(t.Context(), key, ttl, opts)
	if err != nil {
		t.Fatalf("Acquire(%q, %v): %v", key, ttl, err)
	}
	after, _ := s.now()
	s.checkLease(t, "Acquire", lease, key, ttl, before, after)
	if opts != nil && opts.Owner != "" && lease.Owner != opts.Owner {
		t.Errorf("Acquire(%q) with Owner %q returned a lease of owner %q", key, opts.Owner, lease.Owner)
	}
	return lease
}

// acquireAfter takes key with l and checks that its token is higher than
// prev, the last token issued for key before.
func (s *suite) acquireAfter(t *testing.T, l *fence.Locker, key string, prev fence.Token, how string) fence.Lease {
	t.Helper()
	lease := s.acquire(t, l, key, s.h.TTL, nil)
	if lease.Token <= prev {
		t.Fatalf("Acquire(%q) after %s returned token %d; want more than %d", key, how, lease.Token, prev)
	}
	return lease
}

// renew renews lease with l and checks the renewed lease.
func (s *suite) renew(t *testing.T, l *fence.Locker, lease fence.Lease) fence.Lease {
	t.Helper()
	before, _ := s.now()
	got, err := l.Renew(t.Context(), lease)
	if err != nil {
		t.Fatalf("Renew(%q, token %d): %v", lease.Key, lease.Token, err)
	}
	after, _ := s.now()
	s.checkLease(t, "Renew", got, lease.Key, lease.TTL, before, after)
	if got.Owner != lease.Owner || got.Token != lease.Token {
		t.Errorf("Renew(%q) returned owner %q token %d; want the lease's owner %q and token %d",
			lease.Key, got.Owner, got.Token, lease.Owner, lease.Token)
	}
	if got.ValidUntil.Before(lease.ValidUntil) {
		t.Errorf("Renew(%q) moved ValidUntil back from %v to %v", lease.Key, lease.ValidUntil, got.ValidUntil)
	}
	return got
}

// release releases lease with l and fails on any error.
func release(t *testing.T, l *fence.Locker, lease fence.Lease) {
	t.Helper()
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release(%q, token %d): %v", lease.Key, lease.Token, err)
	}
}

// breakKey breaks key with l and fails on any error.
func breakKey(t *testing.T, l *fence.Locker, key string) {
	t.Helper()
	if err := l.Break(t.Context(), key); err != nil {
		t.Fatalf("Break(%q): %v", key, err)
	}
}

// checkLease checks a lease returned by op for key and ttl; before and
// after are the harness clock around the call (zero without one).
func (s *suite) checkLease(t *testing.T, op string, lease fence.Lease, key string, ttl time.Duration, before, after time.Time) {
	t.Helper()
	switch {
	case lease.Key != key:
		t.Errorf("%s(%q) returned a lease on key %q", op, key, lease.Key)
	case lease.Owner == "":
		t.Errorf("%s(%q) returned a lease with an empty owner", op, key)
	case !lease.Token.Valid():
		t.Errorf("%s(%q) returned token 0, which is never valid", op, key)
	case lease.TTL != ttl:
		t.Errorf("%s(%q) returned TTL %v; want %v", op, key, lease.TTL, ttl)
	case lease.ValidUntil.IsZero():
		t.Errorf("%s(%q) returned a lease with a zero ValidUntil", op, key)
	case s.h.Now != nil && (lease.ValidUntil.Before(before.Add(ttl)) || lease.ValidUntil.After(after.Add(ttl))):
		t.Errorf("%s(%q) returned ValidUntil %v; want the send time plus TTL, between %v and %v",
			op, key, lease.ValidUntil, before.Add(ttl), after.Add(ttl))
	}
}

// wantErr fails unless err matches target.
func wantErr(t *testing.T, err, target error, call string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s returned %v; want an error matching %v", call, err, target)
	}
}

// wantInvalid fails unless err matches fence.ErrInvalid and is a
// *fence.InvalidError.
func wantInvalid(t *testing.T, err error, call string) {
	t.Helper()
	wantErr(t, err, fence.ErrInvalid, call)
	if _, ok := errors.AsType[*fence.InvalidError](err); !ok {
		t.Errorf("%s returned %v (%T); want a *fence.InvalidError", call, err, err)
	}
}

// checkHeldError checks the error of an Acquire of key, made between
// before and after on the harness clock, that lost to holder. It returns
// a description of what is wrong, or "" (racing goroutines call it too).
func (s *suite) checkHeldError(err error, key string, holder fence.Lease, before, after time.Time) string {
	if !errors.Is(err, fence.ErrHeld) {
		return "want an error matching fence.ErrHeld"
	}
	he, ok := errors.AsType[*fence.HeldError](err)
	switch {
	case !ok:
		return "want a *fence.HeldError"
	case he.Key != key:
		return fmt.Sprintf("HeldError.Key is %q; want %q", he.Key, key)
	case he.Owner != "" && he.Owner != holder.Owner:
		return fmt.Sprintf("HeldError.Owner is %q; want the holder %q", he.Owner, holder.Owner)
	case he.Token != 0 && he.Token != holder.Token:
		return fmt.Sprintf("HeldError.Token is %d; want the holder's %d", he.Token, holder.Token)
	case !he.ValidUntil.IsZero() && s.h.Now != nil && (!he.ValidUntil.After(before) || he.ValidUntil.After(after.Add(holder.TTL))):
		return fmt.Sprintf("HeldError.ValidUntil is %v; want after the request (%v) and at most the holder's TTL after its answer (%v)",
			he.ValidUntil, before, after)
	}
	return ""
}

// wantHeldBy tries to take key with l and fails unless the attempt loses
// to holder with an error matching fence.ErrHeld.
func (s *suite) wantHeldBy(t *testing.T, l *fence.Locker, holder fence.Lease, opts *fence.AcquireOptions) {
	t.Helper()
	before, _ := s.now()
	lease, err := l.Acquire(t.Context(), holder.Key, s.h.TTL, opts)
	after, _ := s.now()
	if err == nil {
		t.Fatalf("Acquire(%q) succeeded with token %d while owner %q held token %d", holder.Key, lease.Token, holder.Owner, holder.Token)
	}
	if msg := s.checkHeldError(err, holder.Key, holder, before, after); msg != "" {
		t.Fatalf("Acquire(%q) of a held key returned %v: %s", holder.Key, err, msg)
	}
}

// inspect describes key with l and checks what LockInfo promises in any
// state.
func (s *suite) inspect(t *testing.T, l *fence.Locker, key string) fence.LockInfo {
	t.Helper()
	before, _ := s.now()
	info, err := l.Inspect(t.Context(), key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	after, _ := s.now()
	switch {
	case info.Key != key:
		t.Errorf("Inspect(%q) returned Key %q", key, info.Key)
	case (info.Token == 0) != (info.Owner == ""):
		t.Errorf("Inspect(%q) returned Owner %q with Token %d; both are set once the key was acquired, neither before", key, info.Owner, info.Token)
	case info.Held && !info.Token.Valid():
		t.Errorf("Inspect(%q) reports a held key with token 0", key)
	case !info.Held && !info.ValidUntil.IsZero():
		t.Errorf("Inspect(%q) reports a free key with ValidUntil %v; want zero", key, info.ValidUntil)
	case info.Held && !info.ValidUntil.IsZero() && s.h.Now != nil && (!info.ValidUntil.After(before) || info.ValidUntil.After(after.Add(s.h.TTL))):
		t.Errorf("Inspect(%q) reports a held key with ValidUntil %v; want after the request (%v) and at most TTL after its answer (%v)",
			key, info.ValidUntil, before, after)
	}
	return info
}

// wantHolder fails unless lease holds its key: Inspect shows it, and
// another owner's Acquire loses to it.
func (s *suite) wantHolder(t *testing.T, l *fence.Locker, lease fence.Lease) {
	t.Helper()
	info := s.inspect(t, l, lease.Key)
	if !info.Held || info.Owner != lease.Owner || info.Token != lease.Token {
		t.Fatalf("Inspect(%q) = Held %v, Owner %q, Token %d; want held by owner %q with token %d",
			lease.Key, info.Held, info.Owner, info.Token, lease.Owner, lease.Token)
	}
	s.wantHeldBy(t, l, lease, nil)
}

// wantFree fails unless key is free and last was its last lease: Inspect
// keeps last's owner and token.
func (s *suite) wantFree(t *testing.T, l *fence.Locker, last fence.Lease) {
	t.Helper()
	info := s.inspect(t, l, last.Key)
	if info.Held || info.Owner != last.Owner || info.Token != last.Token {
		t.Fatalf("Inspect(%q) = Held %v, Owner %q, Token %d; want free, with the last owner %q and token %d kept",
			last.Key, info.Held, info.Owner, info.Token, last.Owner, last.Token)
	}
}

// wantNeverAcquired fails unless Inspect shows key as never acquired.
func (s *suite) wantNeverAcquired(t *testing.T, l *fence.Locker, key string) {
	t.Helper()
	info := s.inspect(t, l, key)
	if info.Held || info.Owner != "" || info.Token != 0 {
		t.Fatalf("Inspect(%q) = Held %v, Owner %q, Token %d; want a key never acquired (free, no owner, token 0)",
			key, info.Held, info.Owner, info.Token)
	}
}
