package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// A follower on each store, in real time with the store's lease, reading
// the key only when the store notifies it or a lease is due to run out
// (its PollInterval is an hour): it sees a term start with the leader's
// value, the value change, the leader resign and another candidate lead
// with a higher term, the key left free, then a leader that crashed
// (its lease left to run out, never released) end by expiry and a new
// leader after it; and never an owner id.
func TestFollowerOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		// MySQL wakes waiters through the holder's named lock, and a
		// release within a moment of the holder taking it can go unseen
		// (lockers/mysql, "Waking waiters"): a follower that never polls
		// then learns of that term's end only at its expiry.
		missesQuickRelease := b.Name == "mysql"
		testFollower(t, b.Lockers(t, 4, nil), ttl, &election.ObserveOptions{PollInterval: time.Hour}, missesQuickRelease)
	})
}

// The same, with a follower whose store's notifications fail: it
// subscribes again before each poll, and polls every TTL/10 meanwhile.
func TestFollowerPollsWithoutNotificationsOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 4, nil)
		lockers[0] = withBrokenNotifier(t, lockers[0])
		testFollower(t, lockers, ttl, &election.ObserveOptions{PollInterval: max(ttl, 3*time.Second) / 10}, false)
	})
}

// testFollower runs the scenario of TestFollowerOnStores with leases of
// ttl, but at least 3 s: the leader must keep its term through two TTLs
// of renewals under the race detector on a busy machine.
//
// With missesQuickRelease, the store may not signal a release that comes
// soon after the holder took the key: the stopped term may then end as
// expired.
func testFollower(t *testing.T, lockers []*fence.Locker, ttl time.Duration, opts *election.ObserveOptions, missesQuickRelease bool) {
	requirePublisher(t, lockers[1])
	key := "leader-" + t.Name()
	ttl = max(ttl, 3*time.Second)
	so := fence.SessionOptions{TTL: ttl, RenewInterval: ttl / 3} // the session's defaults otherwise
	eo := election.Options{RetryInterval: ttl / 10}
	wait := patience(ttl)
	w := newWatch(t, lockers[0], key, opts)
	w.patience = wait
	w.waitFor("the first change", func(election.Leader) bool { return true })
	if first := w.all(); len(first) == 0 || first[0].Leader != (election.Leader{}) || first[0].Previous != (election.Leader{}) {
		t.Fatalf("first change %+v, want one showing nobody leading", first)
	}

	// A term starts with its value, which then changes.
	a := campaign(t, lockers[1], key, so, eo, "10.0.0.1:8080")
	ha := a.term(t, wait)
	if info, err := lockers[0].Inspect(t.Context(), key); err != nil || info.Value != "10.0.0.1:8080" || info.Token != ha.Token() {
		t.Fatalf("when Elected came the key showed %+v, %v; want the term's value published before", info, err)
	}
	la := w.waitFor("the first term with its value", func(l election.Leader) bool { return l.Term == ha.Token() && l.Value == "10.0.0.1:8080" })
	knowsExpiry := !la.ValidUntil.IsZero()
	if !knowsExpiry {
		t.Logf("%s does not say when a lease runs out (LockInfo.ValidUntil is zero): the follower learns of an expiry from a notification or a poll", lockers[0].Name())
	}
	// The leader renews for more than two TTLs: the follower reads the
	// key as each lease it read is due to run out, and reports nothing.
	seen := len(w.all())
	time.Sleep(2*ttl + ttl/4)
	if now := w.all(); len(now) != seen {
		t.Fatalf("changes while the leader only renewed:\n%s", w.history())
	}
	if got, _ := w.f.Leader(); got.Term != la.Term || knowsExpiry && !got.ValidUntil.After(la.ValidUntil) {
		t.Fatalf("after two TTLs of renewals the follower's leader is %+v; want term %d valid past %v", got, la.Term, la.ValidUntil)
	}
	if got, ok := w.f.Leader(); !ok || got.Term != ha.Token() {
		t.Fatalf("Follower.Leader = %+v, %v; want the first term", got, ok)
	}
	if err := a.c.Proclaim(t.Context(), "10.0.0.1:9090"); err != nil {
		t.Fatalf("Proclaim: %v", err)
	}
	w.waitFor("the new value", func(l election.Leader) bool { return l.Term == ha.Token() && l.Value == "10.0.0.1:9090" })
	changed := false
	for _, c := range w.all() {
		changed = changed || c.ValueChanged() && c.Leader.Value == "10.0.0.1:9090" && c.Ended == election.NotEnded
	}
	if !changed {
		t.Fatalf("no Change reported the value change:\n%s", w.history())
	}

	// The leader resigns; another candidate leads, with its own value.
	b := campaign(t, lockers[2], key, so, eo, "10.0.0.2:8080")
	if err := a.c.Resign(t.Context()); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	a.stop()
	hb := b.term(t, wait)
	w.waitFor("the second term with its value", func(l election.Leader) bool { return l.Term == hb.Token() && l.Value == "10.0.0.2:8080" })
	if hb.Token() <= ha.Token() {
		t.Fatalf("second term %d, not above the first %d", hb.Token(), ha.Token())
	}
	// A store that does not say when leases run out cannot tell a
	// release from an expiry.
	released, expired := election.Released, election.Expired
	if !knowsExpiry {
		released, expired = election.Vacated, election.Vacated
	}
	if c, ok := w.endOf(ha.Token()); !ok || c.Ended != released && c.Ended != election.Superseded {
		t.Fatalf("the resigned term ended as %+v (found %v), want %v (or superseded)\n%s", c, ok, released, w.history())
	}
	b.stop()
	w.waitFor("nobody leading after the campaigns stopped", func(l election.Leader) bool { return l.Term == 0 })
	if c, _ := w.endOf(hb.Token()); c.Ended != released && !(missesQuickRelease && c.Ended == expired) {
		t.Fatalf("the stopped term ended as %v, want %v\n%s", c.Ended, released, w.history())
	}

	// A leader crashes: its lease, with its value, is never renewed nor
	// released, and runs out.
	crashed, err := lockers[3].Acquire(t.Context(), key, ttl, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := lockers[3].Publish(t.Context(), crashed, "10.0.0.3:8080"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	w.waitFor("the crashed leader's term", func(l election.Leader) bool { return l.Term == crashed.Token && l.Value == "10.0.0.3:8080" })
	w.waitFor("the crashed leader's term ending", func(l election.Leader) bool { return l.Term != crashed.Token })
	if c, _ := w.endOf(crashed.Token); c.Ended != expired || c.Leader.Term != 0 {
		t.Fatalf("the crashed leader's term ended as %+v, want %v, nobody leading\n%s", c, expired, w.history())
	}
	d := campaign(t, lockers[3], key, so, eo, "10.0.0.4:8080")
	hd := d.term(t, wait)
	w.waitFor("a term after the crash", func(l election.Leader) bool { return l.Term == hd.Token() && l.Value == "10.0.0.4:8080" })
	if hd.Token() <= crashed.Token {
		t.Fatalf("term after the crash %d, not above the crashed one %d", hd.Token(), crashed.Token)
	}
	if c, _ := w.endOf(crashed.Token); c.Leader.Term != 0 {
		t.Fatalf("the crashed term's end shows leader %+v", c.Leader)
	}
	d.stop()
	w.waitFor("nobody leading at the end", func(l election.Leader) bool { return l.Term == 0 })

	for _, c := range w.all() {
		if c.Started() && c.Ended == election.NotEnded && c.Previous.Term != 0 {
			t.Errorf("a Change started a term without ending the one before: %+v", c)
		}
	}
	w.checkNoOwner(ha.Lease().Owner, hb.Lease().Owner, crashed.Owner, hd.Lease().Owner)
}

// withBrokenNotifier returns a Locker over l's driver whose release
// notifications always fail, as a store's would while its connection is
// down.
func withBrokenNotifier(t *testing.T, l *fence.Locker) *fence.Locker {
	t.Helper()
	bl, err := driver.Wrap(l, func(d driver.Locker) driver.Locker { return brokenNotifier{d} })
	if err != nil {
		t.Fatal(err)
	}
	return bl
}

// brokenNotifier is a driver whose NotifyRelease fails and that passes
// Publish on.
type brokenNotifier struct{ driver.Locker }

var errNoNews = errors.New("injected: the notification channel is down")

func (b brokenNotifier) NotifyRelease(context.Context, string) (<-chan struct{}, func(), error) {
	return nil, nil, errNoNews
}

func (b brokenNotifier) Publish(ctx context.Context, lease fence.Lease, value string) error {
	p, ok := b.Locker.(driver.Publisher)
	if !ok {
		return errors.ErrUnsupported
	}
	return p.Publish(ctx, lease, value)
}
