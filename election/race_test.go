package election_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/faultlock"
)

// race is a set of candidates for one key, each with a session of its own
// over its own faultlock.Locker on a shared store, and a record of what
// they and their Lockers report.
// It checks, as events arrive, that tokens grow from term to term and
// whether two candidates ever led at once.
type race struct {
	t     *testing.T
	key   string
	clock *clocktest.Fake // nil in real-time tests
	cands []*cand
	// patience bounds waitFor; 30 s unless a test sets it.
	patience time.Duration

	mu       sync.Mutex
	log      []string
	leading  map[int]fence.Lease
	terms    []term // every Elected, in order
	demotes  []demotion
	failures map[int][]error       // Failed events, per candidate
	attErrs  map[int][]error       // attempts that failed, per candidate
	busy     map[int]int           // attempts that found the key busy, per candidate
	renewals map[int][]fence.Lease // successful renewals, per candidate
	releases []release
	losses   []demotion // the Lockers' LeaseLost events
	overlaps []string   // Elected while another candidate still led
	regress  []string   // a term whose token was not above every earlier one
	holding  int        // leases held: Acquired minus Released
	parked   int        // leader functions waiting in lead for their term to end
	active   int        // campaigns running
}

type term struct {
	id    int
	h     *fence.Handle
	lease fence.Lease // h.Lease() when Elected was reported
	at    time.Time   // when Elected was reported, in real time
}

// release is a Released event of a candidate's Locker.
type release struct {
	id    int
	lease fence.Lease
	err   error
}

type demotion struct {
	id    int
	lease fence.Lease // as last renewed when the event came
	cause error
}

// cand is one candidate of a race.
type cand struct {
	id     int
	c      *election.Candidate
	p      *faultlock.Locker
	cancel context.CancelFunc
	done   chan struct{} // closed when Campaign has returned
	err    error         // Campaign's result, once done is closed
}

// lead is the leader function of the tests: lead until the term ends.
func lead(ctx context.Context, _ *fence.Handle) error {
	<-ctx.Done()
	return context.Cause(ctx)
}

// lead is lead, counted as parked while it waits, for settle.
func (r *race) lead(ctx context.Context, _ *fence.Handle) error {
	r.mu.Lock()
	r.parked++
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	r.parked--
	r.mu.Unlock()
	return context.Cause(ctx)
}

// newRace starts a candidate on each of lockers, campaigning for one key
// through a session of its own with so (and clock, if not nil), with opts
// (copied per candidate, with observers added). mkFn makes the leader
// function, which must end every term in r.lead to let settle see it
// parked; nil means r.lead itself. Campaigns stop when the test ends.
func newRace(t *testing.T, lockers []*fence.Locker, clock *clocktest.Fake, so fence.SessionOptions, opts election.Options, mkFn func(*race) election.Func) *race {
	t.Helper()
	r := &race{t: t, key: "leader-" + t.Name(), clock: clock, patience: 30 * time.Second,
		leading: map[int]fence.Lease{}, failures: map[int][]error{}, attErrs: map[int][]error{}, busy: map[int]int{}, renewals: map[int][]fence.Lease{}}
	if clock != nil {
		so.Clock = clock
	}
	for id, l := range lockers {
		o := opts
		o.Observer = r.observer(id)
		p := faultlock.New(l)
		p.Locker().SetObserver(r.lockerObserver(id))
		s, err := fence.NewSession(p.Locker(), &so)
		if err != nil {
			t.Fatalf("NewSession: %v", err)
		}
		c, err := election.New(s, r.key, &o)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		r.cands = append(r.cands, &cand{id: id, c: c, p: p})
	}
	fn := election.Func(r.lead)
	if mkFn != nil {
		fn = mkFn(r)
	}
	for _, c := range r.cands {
		r.start(c, fn)
	}
	t.Cleanup(r.stopAll)
	return r
}

// start runs c's campaign on a goroutine of its own.
func (r *race) start(c *cand, fn election.Func) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	r.mu.Lock()
	r.active++
	r.mu.Unlock()
	go func() {
		err := c.c.Campaign(ctx, fn)
		r.mu.Lock()
		r.active--
		r.mu.Unlock()
		c.err = err
		close(c.done)
	}()
}

// stop ends c's campaign and returns Campaign's result.
func (r *race) stop(c *cand) error {
	r.t.Helper()
	c.cancel()
	select {
	case <-c.done:
		return c.err
	case <-time.After(30 * time.Second):
		r.t.Fatalf("candidate %d: Campaign did not return after its context ended\n%s", c.id, r.history())
		return nil
	}
}

func (r *race) stopAll() {
	for _, c := range r.cands {
		c.cancel()
	}
	for _, c := range r.cands {
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			r.t.Errorf("candidate %d: Campaign did not return after its context ended", c.id)
		}
	}
}

func (r *race) note(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *race) observer(id int) *election.Observer {
	return &election.Observer{
		Elected: func(e election.ElectedEvent) {
			lease := e.Term.Lease()
			r.mu.Lock()
			defer r.mu.Unlock()
			r.note("%d elected, token %d", id, lease.Token)
			for other := range r.leading {
				r.overlaps = append(r.overlaps, fmt.Sprintf("%d elected with token %d while %d led", id, lease.Token, other))
			}
			if n := len(r.terms); n > 0 && lease.Token <= r.terms[n-1].lease.Token {
				r.regress = append(r.regress, fmt.Sprintf("%d elected with token %d after token %d", id, lease.Token, r.terms[n-1].lease.Token))
			}
			r.leading[id] = lease
			r.terms = append(r.terms, term{id: id, h: e.Term, lease: lease, at: time.Now()})
		},
		Demoted: func(e election.DemotedEvent) {
			lease := e.Term.Lease()
			r.mu.Lock()
			defer r.mu.Unlock()
			r.note("%d demoted, token %d: %v", id, lease.Token, e.Cause)
			delete(r.leading, id)
			r.demotes = append(r.demotes, demotion{id: id, lease: lease, cause: e.Cause})
		},
		Failed: func(e election.FailedEvent) {
			tok := e.Term.Token()
			r.mu.Lock()
			defer r.mu.Unlock()
			r.note("%d failed (token %d): %v", id, tok, e.Err)
			r.failures[id] = append(r.failures[id], e.Err)
		},
	}
}

// lockerObserver records the lease events of candidate id's Locker.
func (r *race) lockerObserver(id int) *fence.Observer {
	return &fence.Observer{
		AcquireAttempt: func(e fence.AcquireAttemptEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.clock != nil {
				r.note("%d attempt at %v: %v", id, r.clock.Now().Sub(epoch), e.Outcome)
			}
			switch e.Outcome {
			case fence.Busy:
				r.busy[id]++
			case fence.Failed:
				r.note("%d attempt failed: %v", id, e.Err)
				r.attErrs[id] = append(r.attErrs[id], e.Err)
			}
		},
		Acquired: func(fence.AcquiredEvent) {
			r.mu.Lock()
			r.holding++
			r.mu.Unlock()
		},
		Renewed: func(e fence.RenewedEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if e.Err != nil {
				r.note("%d renewal failed (token %d): %v", id, e.Lease.Token, e.Err)
				return
			}
			r.renewals[id] = append(r.renewals[id], e.Lease)
		},
		LeaseLost: func(e fence.LeaseLostEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.note("%d lost its lease, token %d: %v", id, e.Lease.Token, e.Cause)
			r.losses = append(r.losses, demotion{id: id, lease: e.Lease, cause: e.Cause})
		},
		Released: func(e fence.ReleasedEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.holding--
			r.note("%d released token %d after %v: %v", id, e.Lease.Token, e.Held, e.Err)
			r.releases = append(r.releases, release{id: id, lease: e.Lease, err: e.Err})
		},
	}
}

// history returns the events so far, for failure messages.
func (r *race) history() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "events:\n  " + strings.Join(r.log, "\n  ")
}

// leaders returns the candidates whose IsLeader is true.
func (r *race) leaders() []int {
	var ids []int
	for _, c := range r.cands {
		if c.c.IsLeader() {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// electedCount returns the number of terms so far.
func (r *race) electedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.terms)
}

// lastTerm returns the latest term.
func (r *race) lastTerm() term {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.terms) == 0 {
		r.t.Fatalf("no term yet")
	}
	return r.terms[len(r.terms)-1]
}

// busyCount returns how many attempts of candidate id found the key busy.
func (r *race) busyCount(id int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.busy[id]
}

// checkSafe fails the test if two candidates led at once or a term's
// token did not exceed the previous one's.
func (r *race) checkSafe() {
	r.t.Helper()
	r.mu.Lock()
	overlaps, regress := r.overlaps, r.regress
	r.mu.Unlock()
	if len(overlaps) > 0 || len(regress) > 0 {
		r.t.Fatalf("overlapping leaders %q, tokens not increasing %q\n%s", overlaps, regress, r.history())
	}
}

// settle waits until every goroutine of the race is parked on the fake
// clock: each running campaign waits on one timer, the keepalive of each
// session holding a lease on two (next renewal, safety deadline), and
// every held lease has its leader function parked in r.lead (none is
// starting or ending).
func (r *race) settle() {
	r.t.Helper()
	giveUp := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		want := r.active + r.holding
		parked := r.clock.Timers() == want && r.parked == r.holding
		r.mu.Unlock()
		if parked {
			return
		}
		if time.Now().After(giveUp) {
			r.t.Fatalf("candidates did not settle: %d timers, want %d\n%s", r.clock.Timers(), want, r.history())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// step advances the fake clock by d and lets the candidates react.
func (r *race) step(d time.Duration) {
	r.t.Helper()
	r.settle()
	r.clock.Advance(d)
	r.settle()
}

// run advances the fake clock by d in steps of one tick.
func (r *race) run(d time.Duration) {
	r.t.Helper()
	for range int(d / tick) {
		r.step(tick)
	}
}

// stepUntil advances the fake clock in steps of d until cond holds, at
// most max steps, and returns the time advanced.
func (r *race) stepUntil(d time.Duration, max int, what string, cond func() bool) time.Duration {
	r.t.Helper()
	r.settle()
	var elapsed time.Duration
	for range max {
		if cond() {
			return elapsed
		}
		r.step(d)
		elapsed += d
	}
	if cond() {
		return elapsed
	}
	r.t.Fatalf("%s: not after %v\n%s", what, elapsed, r.history())
	return 0
}

// waitFor polls cond in real time, for tests on a real store.
func (r *race) waitFor(what string, cond func() bool) {
	r.t.Helper()
	giveUp := time.Now().Add(r.patience)
	for !cond() {
		if time.Now().After(giveUp) {
			r.t.Fatalf("%s: not within %v\n%s", what, r.patience, r.history())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// demotionsOf returns the demotions of candidate id.
func (r *race) demotionsOf(id int) []demotion {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []demotion
	for _, d := range r.demotes {
		if d.id == id {
			out = append(out, d)
		}
	}
	return out
}

// renewalsOf returns the successful renewals of the leases of
// candidate id with token tok.
func (r *race) renewalsOf(id int, tok fence.Token) []fence.Lease {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []fence.Lease
	for _, l := range r.renewals[id] {
		if l.Token == tok {
			out = append(out, l)
		}
	}
	return out
}

// releasesOf returns the releases of candidate id's leases.
func (r *race) releasesOf(id int) []release {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []release
	for _, rel := range r.releases {
		if rel.id == id {
			out = append(out, rel)
		}
	}
	return out
}

// lossesOf returns the leases of candidate id reported lost.
func (r *race) lossesOf(id int) []demotion {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []demotion
	for _, d := range r.losses {
		if d.id == id {
			out = append(out, d)
		}
	}
	return out
}

// failuresOf returns the errors candidate id reported to Failed.
func (r *race) failuresOf(id int) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.failures[id]...)
}

// attemptFailuresOf returns the errors of candidate id's attempts that
// failed, as its Locker reported them.
func (r *race) attemptFailuresOf(id int) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.attErrs[id]...)
}

// anyFailure reports whether some error of errs matches target.
func anyFailure(errs []error, target error) bool {
	for _, err := range errs {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
