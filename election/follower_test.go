package election_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/lockers/memory"
)

func TestObserveRejects(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	tests := []struct {
		name   string
		l      *fence.Locker
		key    string
		opts   *election.ObserveOptions
		field  string
		errorf string
	}{
		{"nil locker", nil, "k", nil, "locker", ""},
		{"empty key", l, "", nil, "key", ""},
		{"key too long", l, strings.Repeat("k", driver.InfoOf(l).MaxKeyLen+1), nil, "key", ""},
		{"negative poll", l, "k", &election.ObserveOptions{PollInterval: -time.Second}, "PollInterval", ""},
		{"negative call timeout", l, "k", &election.ObserveOptions{CallTimeout: -time.Second}, "CallTimeout", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := election.Observe(t.Context(), tt.l, tt.key, tt.opts)
			var inv *fence.InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field || f != nil {
				t.Fatalf("Observe: %v, %v; want an InvalidError on %s", f, err, tt.field)
			}
		})
	}
	if _, _, err := election.CurrentLeader(t.Context(), nil, "k"); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("CurrentLeader(nil locker): %v, want an error matching fence.ErrInvalid", err)
	}
	if _, _, err := election.CurrentLeader(t.Context(), l, ""); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("CurrentLeader(empty key): %v, want an error matching fence.ErrInvalid", err)
	}
}

func TestValueTooLongIsInvalid(t *testing.T) {
	t.Parallel()
	sess := newSession(t, memory.New(nil), nil)
	long := strings.Repeat("v", fence.MaxValueLen+1)
	_, err := election.New(sess, "k", &election.Options{Value: long})
	var inv *fence.InvalidError
	if !errors.As(err, &inv) || inv.Field != "Value" {
		t.Fatalf("New with a %d-byte Value: %v; want an InvalidError on Value", len(long), err)
	}
	c, err := election.New(sess, "k", &election.Options{Value: strings.Repeat("v", fence.MaxValueLen)})
	if err != nil {
		t.Fatalf("New with a MaxValueLen Value: %v", err)
	}
	if err := c.Proclaim(t.Context(), long); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Proclaim of %d bytes: %v; want an error matching fence.ErrInvalid", len(long), err)
	}
}

// The value is in the store before Elected and before the leader's
// function runs; Proclaim while not leading sets the next term's value;
// CurrentLeader reads the term without its owner.
func TestValuePublishedBeforeElected(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	var atElected []fence.LockInfo
	inspect := func() fence.LockInfo {
		info, err := l.Inspect(context.Background(), "k")
		if err != nil {
			t.Error(err)
		}
		return info
	}
	c, err := election.New(newSession(t, l, nil), "k", &election.Options{
		Value:    "first",
		Observer: &election.Observer{Elected: func(election.ElectedEvent) { atElected = append(atElected, inspect()) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Proclaim(t.Context(), "second"); err != nil {
		t.Fatalf("Proclaim while not leading: %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var atStart fence.LockInfo
	err = c.Campaign(ctx, func(ctx context.Context, term *fence.Handle) error {
		atStart = inspect()
		leader, ok, err := election.CurrentLeader(ctx, l, "k")
		if err != nil || !ok || leader.Term != term.Token() || leader.Value != "second" {
			t.Errorf("CurrentLeader = %+v, %v, %v; want the term with value %q", leader, ok, err, "second")
		}
		if s := fmt.Sprintf("%+v %#v", leader, leader); strings.Contains(s, term.Lease().Owner) {
			t.Errorf("CurrentLeader shows the owner id: %s", s)
		}
		if err := c.Proclaim(ctx, "third"); err != nil {
			t.Errorf("Proclaim while leading: %v", err)
		}
		if info := inspect(); info.Value != "third" {
			t.Errorf("after Proclaim the key shows value %q", info.Value)
		}
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign: %v", err)
	}
	if len(atElected) != 1 || atElected[0].Value != "second" || atStart.Value != "second" {
		t.Fatalf("value when Elected came %+v, when the function started %q; want %q at both", atElected, atStart.Value, "second")
	}
	if _, ok, err := election.CurrentLeader(t.Context(), l, "k"); ok || err != nil {
		t.Fatalf("after the campaign CurrentLeader reports a leader (%v, %v)", ok, err)
	}
}

// A store that keeps no values still elects; its followers see each
// term with an empty value, and Proclaim says the store cannot.
func TestElectsWithoutValues(t *testing.T) {
	t.Parallel()
	l, err := driver.Wrap(memory.New(nil), func(d driver.Locker) driver.Locker { return noValues{d, d.(driver.ReleaseNotifier)} })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := driver.LockerOf(l).(driver.Publisher); ok {
		t.Fatal("the wrapper keeps values")
	}
	w := newWatch(t, l, "k", &election.ObserveOptions{PollInterval: 10 * time.Millisecond})
	cd := campaign(t, l, "k", fence.SessionOptions{}, election.Options{}, "addr")
	h := cd.term(t, 30*time.Second)
	w.waitFor("the term", func(got election.Leader) bool { return got.Term == h.Token() && got.Value == "" })
	if err := cd.c.Proclaim(t.Context(), "x"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Proclaim on a store without values: %v, want an error matching errors.ErrUnsupported", err)
	}
}

// noValues is a driver that notifies but keeps no values.
type noValues struct {
	driver.Locker
	driver.ReleaseNotifier
}

// A term whose first publish finds the lease gone is over before it
// started: no Elected, no function; the candidate campaigns on and leads
// the next term. Store errors of that publish are retried.
func TestPublishAtTermStart(t *testing.T) {
	t.Parallel()
	mem := memory.New(nil)
	p := &flakyPublisher{}
	l, err := driver.Wrap(mem, func(d driver.Locker) driver.Locker { p.Locker = d; return p })
	if err != nil {
		t.Fatal(err)
	}
	p.script = []error{&fence.NotHeldError{Key: "k", Reason: "injected"}, errors.New("injected: store unavailable"), errors.New("injected: store unavailable")}
	elected := 0
	c, err := election.New(newSession(t, l, nil), "k", &election.Options{
		Value:         "v",
		RetryInterval: 10 * time.Millisecond,
		Observer:      &election.Observer{Elected: func(election.ElectedEvent) { elected++ }},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var first fence.Token
	err = c.Campaign(ctx, func(ctx context.Context, term *fence.Handle) error {
		first = term.Token()
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign: %v", err)
	}
	if elected != 1 || first != 2 || p.calls() != 4 {
		t.Fatalf("elected %d times, led token %d, %d publishes; want once, token 2 (the first term ended unpublished), 4 publishes", elected, first, p.calls())
	}
}

// flakyPublisher fails its Publish calls with the errors of script, in
// order, then passes them on.
type flakyPublisher struct {
	driver.Locker
	script []error
	n      atomic.Int64
}

func (p *flakyPublisher) Publish(ctx context.Context, lease fence.Lease, value string) error {
	n := int(p.n.Add(1))
	if n <= len(p.script) {
		return p.script[n-1]
	}
	return p.Locker.(driver.Publisher).Publish(ctx, lease, value)
}

func (p *flakyPublisher) calls() int { return int(p.n.Load()) }

// Resign during a term's first publish, which the store keeps failing,
// ends the term before it started: Resign returns once the lease is
// released, and no Elected came.
func TestResignWhilePublishing(t *testing.T) {
	t.Parallel()
	mem := memory.New(nil)
	p := &flakyPublisher{}
	l, err := driver.Wrap(mem, func(d driver.Locker) driver.Locker { p.Locker = d; return p })
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		p.script = append(p.script, errors.New("injected: store unavailable"))
	}
	var elected atomic.Int64
	c, err := election.New(newSession(t, l, nil), "k", &election.Options{
		RetryInterval: 10 * time.Millisecond,
		Holdoff:       time.Hour,
		Observer:      &election.Observer{Elected: func(election.ElectedEvent) { elected.Add(1) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Campaign(ctx, lead) }()
	for p.calls() < 3 {
		time.Sleep(time.Millisecond)
	}
	if err := c.Resign(t.Context()); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	if info, err := mem.Inspect(t.Context(), "k"); err != nil || info.Held {
		t.Fatalf("after Resign the key is %+v, %v; want it released", info, err)
	}
	if c.IsLeader() || elected.Load() != 0 {
		t.Fatalf("leading %v, %d Elected events; want a term that never started", c.IsLeader(), elected.Load())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign: %v", err)
	}
}

// A reader that takes nothing for a while finds one Change: the latest
// state, compared with what it took before; the follower never waited
// for it.
func TestSlowReaderGetsTheLatest(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f, err := election.Observe(ctx, l, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	first := <-f.Changes()
	if first != (election.Change{}) {
		t.Fatalf("first change %+v, want nobody leading", first)
	}
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := l.Publish(t.Context(), lease, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitLeader(t, f, func(got election.Leader) bool { return got.Value == "v99" })
	got := <-f.Changes()
	if got.Previous != (election.Leader{}) || got.Leader.Term != lease.Token || got.Leader.Value != "v99" || !got.Started() || got.Ended != election.NotEnded {
		t.Fatalf("the change after 100 publishes: %+v; want the term started with v99", got)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, f, func(got election.Leader) bool { return got.Term == 0 })
	next, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(t.Context(), next, "w"); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, f, func(got election.Leader) bool { return got.Value == "w" })
	got = <-f.Changes()
	if got.Previous.Term != lease.Token || got.Previous.Value != "v99" || got.Leader.Term != next.Token || got.Ended != election.Released || !got.Started() {
		t.Fatalf("the change after a release and a new term: %+v; want v99's term released, the next started", got)
	}
	select {
	case c := <-f.Changes():
		t.Fatalf("an extra change %+v", c)
	default:
	}
	cancel()
	if _, open := <-f.Changes(); open {
		t.Fatal("Changes not closed after the context ended")
	}
}

// waitLeader waits until f has read a Leader that satisfies cond.
func waitLeader(t *testing.T, f *election.Follower, cond func(election.Leader) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if got, _ := f.Leader(); cond(got) {
			return
		}
		if time.Now().After(deadline) {
			got, _ := f.Leader()
			t.Fatalf("the follower's leader is still %+v", got)
		}
	}
}

// Against a store that never answers, Observe returns by its
// CallTimeout, and by ctx; a follower whose store stops answering closes
// Changes once its context ends.
func TestObserveHungStore(t *testing.T) {
	t.Parallel()
	p := faultlock.New(memory.New(nil))
	p.Set(faultlock.Hanging)
	if _, err := election.Observe(t.Context(), p.Locker(), "k", &election.ObserveOptions{CallTimeout: 50 * time.Millisecond}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Observe on a hung store: %v, want its CallTimeout's context.DeadlineExceeded", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := election.Observe(ctx, p.Locker(), "k", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Observe on a hung store: %v, want ctx's error", err)
	}
	if _, _, err := election.CurrentLeader(ctx, p.Locker(), "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CurrentLeader on a hung store: %v, want ctx's error", err)
	}

	p.Set(faultlock.Healthy)
	ctx, cancel = context.WithCancel(t.Context())
	f, err := election.Observe(ctx, p.Locker(), "k", &election.ObserveOptions{PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.Set(faultlock.Hanging)
	time.Sleep(20 * time.Millisecond) // a read is in flight, hanging
	cancel()
	for range f.Changes() {
	}
}

// With no notification and no poll due (an hour away), a follower reads
// the key when the lease it read is due to run out, and reports the
// term expired.
func TestFollowerReadsAtExpiry(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(epoch)
	l := memory.New(&memory.Options{Clock: clock})
	lease, err := l.Acquire(t.Context(), "k", testTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWatch(t, l, "k", &election.ObserveOptions{PollInterval: time.Hour, Clock: clock})
	w.waitFor("the term", func(got election.Leader) bool { return got.Term == lease.Token })
	if err := clock.WaitTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(testTTL + time.Millisecond)
	w.waitFor("the term's end", func(got election.Leader) bool { return got.Term == 0 })
	if c, _ := w.endOf(lease.Token); c.Ended != election.Expired {
		t.Fatalf("the term ended as %v, want expired\n%s", c.Ended, w.history())
	}
}

// A store that keeps reporting a lease held past its expiry (its clock
// behind the follower's) is read again with a growing pause, not in a
// loop.
func TestFollowerBacksOffPastExpiry(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(epoch)
	mem := memory.New(&memory.Options{Clock: clock})
	st := &staleExpiry{clock: clock}
	l, err := driver.Wrap(mem, func(d driver.Locker) driver.Locker { st.Locker = d; return st })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(t.Context(), "k", testTTL, nil); err != nil {
		t.Fatal(err)
	}
	newWatch(t, l, "k", &election.ObserveOptions{PollInterval: time.Hour, Clock: clock})
	for i := range 10 {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		err := clock.WaitTimers(ctx, 1) // the follower waits: it does not spin
		cancel()
		if err != nil {
			t.Fatalf("the follower armed no timer after %d reads: it reads in a loop", st.reads.Load())
		}
		if n := st.reads.Load(); n > int64(i)+3 {
			t.Fatalf("%d reads after %d steps of the clock", n, i)
		}
		clock.Advance(time.Second)
	}
}

// staleExpiry is a driver whose Inspect reports a held lease as due to
// run out a second ago.
type staleExpiry struct {
	driver.Locker
	clock fence.Clock
	reads atomic.Int64
}

func (s *staleExpiry) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	s.reads.Add(1)
	info, err := s.Locker.Inspect(ctx, key)
	if info.Held {
		info.ValidUntil = s.clock.Now().Add(-time.Second)
	}
	return info, err
}
