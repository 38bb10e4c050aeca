package schedule_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/internal/testing/testlockers"
	memres "github.com/fencekit/fence/resources/memory"
	"github.com/fencekit/fence/schedule"
)

// retryLease is the lease of the real-time RetryWithin tests: the
// store's test TTL, but at least 4 s. With renewals every quarter of it
// and the default safety margin (a tenth), a lease outlives a stall of
// this process of about 2.6 s (tests under the race detector on a loaded
// machine have stalled for more than a second); a lease lost to a stall
// would end a run the test meant to finish.
func retryLease(ttl time.Duration) time.Duration {
	return max(ttl, 4*time.Second)
}

// retrySession is the session of the real-time RetryWithin tests.
func retrySession(lease time.Duration) fence.SessionOptions {
	return fence.SessionOptions{
		TTL:            lease,
		RenewInterval:  lease / 4, // not under Cloud Storage's MinRenewInterval (1 s)
		CallTimeout:    lease / 2,
		ReleaseTimeout: lease / 2,
	}
}

// How the first run of a window ends in testRetry.
type ending int

const (
	stopped  ending = iota // its replica's ctx is cancelled, as on SIGTERM: the lock is released
	cutOff                 // its replica's store calls hang: the lease is lost, never released
	finished               // it returns nil
)

func (e ending) String() string {
	return [...]string{"stopped", "cut-off", "finished"}[e]
}

// On every store, in real time with the store's test lease (at least
// 4 s), the cases of testRetry and testMissed, side by side: each
// mostly waits, so they run at once instead of in turn.
func TestRetryOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lease := retryLease(ttl)
		cases := map[string]func(t *testing.T){
			"missed": func(t *testing.T) { testMissed(t, b.Lockers(t, 3, nil), lease) },
		}
		for _, tt := range []struct {
			end   ending
			retry bool
		}{{stopped, true}, {cutOff, true}, {finished, true}, {stopped, false}} {
			name := tt.end.String()
			if !tt.retry {
				name += "-RetryWithin0"
			}
			cases[name] = func(t *testing.T) { testRetry(t, b.Lockers(t, 3, nil), lease, tt.end, tt.retry) }
		}
		var wg sync.WaitGroup
		for name, test := range cases {
			wg.Go(func() { t.Run(name, test) })
		}
		wg.Wait()
	})
}

// testRetry: windows of 12 L, the first starting as the test does, and
// three replicas running Run: the first run works for 2 L, then ends as
// the case says.
//
// With RetryWithin 9 L: the replicas that found the lock busy wait for
// it; when the first run did not finish (stopped, cut off), one of them
// runs the window again under a higher token, for 2 L; the first run's
// write after the rerun's is refused by a fenced resource; the third
// replica finds the window done, and so does a later attempt. When the
// first run finished, both find the window done.
//
// With RetryWithin 0, the other replicas find the lock busy at once and
// the stopped window is not run again.
func testRetry(t *testing.T, lockers []*fence.Locker, lease time.Duration, end ending, retry bool) {
	interval := 12 * lease
	opts := schedule.Options{Offset: offsetNow(interval)}
	if retry {
		opts.RetryWithin = 9 * lease
	}
	report := memres.New(nil)
	rerunWrote := make(chan struct{})
	late := make(chan error, 1) // the cut-off run's write after the rerun's
	f := newFarm(t, lockers, nil, nil, interval, retrySession(lease), opts,
		func(f *farm, r *replica, ctx context.Context, h *fence.Handle) error {
			first := len(f.windows()) == 1 && len(f.runsOf(f.windows()[0])) == 1 // runs never overlap here
			if err := work(ctx, 2*lease); err != nil {
				return err
			}
			if !first {
				if err := report.Put(ctx, "report", h.Token(), []byte("by the rerun")); err != nil {
					return err
				}
				close(rerunWrote)
				return nil
			}
			switch end {
			case stopped:
				r.cancel()
				<-ctx.Done()
				return context.Cause(ctx)
			case cutOff:
				r.p.Set(faultlock.Hanging)
				<-ctx.Done()
				select {
				case <-rerunWrote:
					late <- report.Put(context.Background(), "report", h.Token(), []byte("late"))
				case <-time.After(f.patience):
					late <- errors.New("no rerun wrote")
				}
				return context.Cause(ctx)
			}
			return report.Put(ctx, "report", h.Token(), []byte("by the first run"))
		})
	f.patience = patience(lease)
	f.start()
	var w time.Time
	f.waitFor("a run", func() bool {
		ws := f.windows()
		if len(ws) > 0 {
			w = ws[0]
		}
		return len(ws) > 0
	})
	// Every replica has reported its attempt at the window.
	f.waitFor("an attempt of every replica", func() bool {
		for id := range f.reps {
			if len(f.attemptsOf(id, w)) == 0 {
				return false
			}
		}
		return true
	})
	runs := f.runsOf(w)
	first := runs[0]
	es := f.attemptsOf(first.id, w)
	if len(es) != 1 || es[0].Outcome != schedule.Ran || es[0].Finished != (end == finished) {
		t.Fatalf("the first run's attempts %+v, want one that ran, finished %v\n%s", es, end == finished, f.history())
	}
	rerun := retry && end != finished
	switch {
	case rerun && len(runs) != 2:
		t.Fatalf("the window ran %d times, want twice\n%s", len(runs), f.history())
	case !rerun && len(runs) != 1:
		t.Fatalf("the window ran %d times, want once\n%s", len(runs), f.history())
	}
	third := -1 // the replica that neither ran nor reran the window
	for id := range f.reps {
		if id != first.id && (!rerun || id != runs[1].id) {
			third = id
		}
	}
	want := schedule.Done
	if !retry {
		want = schedule.Busy
	}
	if es := f.attemptsOf(third, w); len(es) != 1 || es[0].Outcome != want || es[0].Err != nil {
		t.Fatalf("replica %d's attempts %+v, want %v\n%s", third, es, want, f.history())
	}
	if rerun {
		second := runs[1]
		es := f.attemptsOf(second.id, w)
		if len(es) != 1 || es[0].Outcome != schedule.Retried || !es[0].Finished || es[0].Err != nil {
			t.Fatalf("the rerun's attempts %+v, want one retried and finished\n%s", es, f.history())
		}
		if second.lease.Token <= first.lease.Token {
			t.Fatalf("the rerun's token %d is not above the first run's %d", second.lease.Token, first.lease.Token)
		}
		if err := report.Put(t.Context(), "report", first.lease.Token, []byte("late")); !errors.Is(err, fence.ErrStaleToken) {
			t.Fatalf("a write with the first run's token after the rerun's: %v, want ErrStaleToken", err)
		}
		if end == cutOff {
			select {
			case err := <-late:
				if !errors.Is(err, fence.ErrStaleToken) {
					t.Fatalf("the cut-off run's late write: %v, want ErrStaleToken\n%s", err, f.history())
				}
			case <-time.After(f.patience):
				t.Fatal("the cut-off run did not write")
			}
		}
	}
	// A replica that looks again in the window finds it done.
	if out, err := f.reps[third].job.Attempt(t.Context()); out != schedule.Done || err != nil {
		t.Fatalf("a later attempt: %v, %v; want done\n%s", out, err, f.history())
	}
	if now := time.Now(); !w.Equal(f.reps[third].job.Window(now)) {
		t.Fatalf("the test outlasted its window %v (now %v)", w, now)
	}
	f.stopAll()
	if runs := f.runsOf(w); len(runs) != 1+btoi(rerun) {
		t.Fatalf("the window ran %d times\n%s", len(runs), f.history())
	}
	if m := f.missedOf(w); len(m) != 0 {
		t.Fatalf("missed events %+v\n%s", m, f.history())
	}
}

// testMissed: windows of 3 L and an allowance of L/2: the first run's
// replica is cut off at once (its store calls hang), so its lease
// outlives the allowance and the others find the lock busy until it
// ends. The replica that starts the next window reports the first
// missed, once, and runs the next window under a higher token; the first
// window never runs again.
func testMissed(t *testing.T, lockers []*fence.Locker, lease time.Duration) {
	interval := 3 * lease
	f := newFarm(t, lockers, nil, nil, interval, retrySession(lease), schedule.Options{
		Offset:      offsetNow(interval),
		RetryWithin: lease / 2,
	}, func(f *farm, r *replica, ctx context.Context, _ *fence.Handle) error {
		if len(f.windows()) == 1 && len(f.runsOf(f.windows()[0])) == 1 {
			r.p.Set(faultlock.Hanging)
			<-ctx.Done()
			return context.Cause(ctx)
		}
		return work(ctx, lease) // the next window's run
	})
	f.patience = patience(lease)
	f.start()
	var ws []time.Time
	f.waitFor("a second window run", func() bool {
		ws = f.windows()
		return len(ws) > 1 && len(f.missedOf(ws[0])) > 0
	})
	w := ws[0]
	first, next := f.runsOf(w)[0], f.runsOf(ws[1])[0]
	if es := f.attemptsOf(first.id, w); len(es) != 1 || es[0].Outcome != schedule.Ran || es[0].Finished || !errors.Is(es[0].Err, fence.ErrLeaseLost) {
		t.Fatalf("the cut-off run's attempts %+v, want a run that lost its lease", es)
	}
	for id := range f.reps {
		if id == first.id {
			continue
		}
		if es := f.attemptsOf(id, w); len(es) < 1 || es[0].Outcome != schedule.Busy {
			t.Fatalf("replica %d's attempts at the first window %+v, want busy first\n%s", id, es, f.history())
		}
	}
	m := f.missedOf(w)
	if len(m) != 1 || m[0].id != next.id || m[0].Lease.Token != next.lease.Token {
		t.Fatalf("missed events %+v, want one by replica %d under token %d\n%s", m, next.id, next.lease.Token, f.history())
	}
	if next.lease.Token <= first.lease.Token {
		t.Fatalf("the next window ran under token %d, not above %d", next.lease.Token, first.lease.Token)
	}
	f.stopAll()
	if len(f.runsOf(w)) != 1 || len(f.missedOf(w)) != 1 {
		t.Fatalf("the missed window ran again, or was reported twice\n%s", f.history())
	}
	f.checkAtMostOnce()
}

// work takes d, or returns the cause of ctx's end.
func work(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
