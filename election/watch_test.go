package election_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/election"
)

// watch is a Follower under test and every Change it reported, read as
// soon as it comes.
type watch struct {
	t        *testing.T
	f        *election.Follower
	patience time.Duration
	done     chan struct{} // closed when Changes was closed

	mu      sync.Mutex
	changes []election.Change
}

// newWatch follows key through l with opts until the test ends.
func newWatch(t *testing.T, l *fence.Locker, key string, opts *election.ObserveOptions) *watch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f, err := election.Observe(ctx, l, key, opts)
	if err != nil {
		cancel()
		t.Fatalf("Observe: %v", err)
	}
	w := &watch{t: t, f: f, patience: 30 * time.Second, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for c := range f.Changes() {
			w.mu.Lock()
			w.changes = append(w.changes, c)
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-w.done
	})
	return w
}

// all returns the changes so far.
func (w *watch) all() []election.Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]election.Change(nil), w.changes...)
}

// latest is the Leader of the last Change so far.
func (w *watch) latest() election.Leader {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.changes) == 0 {
		return election.Leader{}
	}
	return w.changes[len(w.changes)-1].Leader
}

// waitFor waits until the last Change's Leader satisfies cond, and returns
// that Leader; it fails the test after w.patience.
func (w *watch) waitFor(what string, cond func(election.Leader) bool) election.Leader {
	w.t.Helper()
	deadline := time.Now().Add(w.patience)
	for {
		w.mu.Lock()
		n := len(w.changes)
		var last election.Leader
		if n > 0 {
			last = w.changes[n-1].Leader
		}
		w.mu.Unlock()
		if n > 0 && cond(last) {
			return last
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the follower did not see %s within %v; changes:\n%s", what, w.patience, w.history())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// endOf returns the Change that reported the end of term, and whether
// there is one.
func (w *watch) endOf(term fence.Token) (election.Change, bool) {
	for _, c := range w.all() {
		if c.Previous.Term == term && c.Leader.Term != term {
			return c, true
		}
	}
	return election.Change{}, false
}

// sawValue reports whether a Change showed term with value.
func (w *watch) sawValue(term fence.Token, value string) bool {
	for _, c := range w.all() {
		if c.Leader.Term == term && c.Leader.Value == value {
			return true
		}
	}
	return false
}

// history prints the changes, one a line.
func (w *watch) history() string {
	var b strings.Builder
	for i, c := range w.all() {
		fmt.Fprintf(&b, "  %d: %+v -> %+v (ended: %v)\n", i, c.Previous, c.Leader, c.Ended)
	}
	return b.String()
}

// checkNoOwner fails the test when a Change or the follower's Leader
// shows one of owners (owner ids, secrets) in any form.
func (w *watch) checkNoOwner(owners ...string) {
	w.t.Helper()
	l, _ := w.f.Leader()
	seen := fmt.Sprintf("%#v %+v %v", w.all(), w.all(), l)
	for _, o := range owners {
		if o != "" && strings.Contains(seen, o) {
			w.t.Fatalf("the follower shows owner id %q: %s", o, seen)
		}
		if fp := fence.OwnerFingerprint(o); o != "" && strings.Contains(seen, fp) {
			w.t.Fatalf("the follower shows the fingerprint %q of an owner id: %s", fp, seen)
		}
	}
}

// requirePublisher fails the test when l's driver keeps no values: every
// store of the shared table must (driver.Publisher), for followers to
// see the leader's value.
func requirePublisher(t *testing.T, l *fence.Locker) {
	t.Helper()
	if _, ok := driver.LockerOf(l).(driver.Publisher); !ok {
		t.Fatalf("the %s driver keeps no public values (no driver.Publisher): followers would see no leader's value", l.Name())
	}
}

// candidate is one campaign of a test, with its own session.
type candidate struct {
	c      *election.Candidate
	cancel context.CancelFunc
	done   chan error
	elect  chan *fence.Handle // each term, as Elected reports it
}

// campaign starts a candidate for key on l that publishes value, and
// stops it when the test ends.
func campaign(t *testing.T, l *fence.Locker, key string, so fence.SessionOptions, opts election.Options, value string) *candidate {
	t.Helper()
	s, err := fence.NewSession(l, &so)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	cd := &candidate{done: make(chan error, 1), elect: make(chan *fence.Handle, 16)}
	opts.Value = value
	opts.Observer = &election.Observer{Elected: func(e election.ElectedEvent) { cd.elect <- e.Term }}
	cd.c, err = election.New(s, key, &opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cd.cancel = cancel
	go func() { cd.done <- cd.c.Campaign(ctx, lead) }()
	t.Cleanup(cd.stop)
	return cd
}

// stop ends the campaign and waits for it.
func (cd *candidate) stop() {
	if cd.cancel != nil {
		cd.cancel()
		<-cd.done
		cd.cancel = nil
	}
}

// term waits for the candidate's next term.
func (cd *candidate) term(t *testing.T, patience time.Duration) *fence.Handle {
	t.Helper()
	select {
	case h := <-cd.elect:
		return h
	case <-time.After(patience):
		t.Fatalf("the candidate was not elected within %v", patience)
		return nil
	}
}
