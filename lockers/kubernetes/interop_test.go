package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// The interoperability test's timing. client-go's elector stops leading
// at the latest RetryPeriod + RenewDeadline after its last successful
// renewal (2.5 s), below its LeaseDuration (3 s), as client-go requires.
// The fence electors' sessions have a TTL of 2.5 s, stored as 3 s: a
// contender of either kind waits 3 s from when it saw the last renewal.
const (
	cgLeaseDuration = 3 * time.Second
	cgRenewDeadline = 2 * time.Second
	cgRetryPeriod   = 500 * time.Millisecond
	fenceTTL        = 2500 * time.Millisecond
	// pauseFor is how long a paused elector cannot reach the server:
	// longer than a lease, so it loses it.
	pauseFor = 4 * time.Second
)

func init() { klog.SetLogger(logr.Discard()) }

// TestInteropWithClientGo runs client-go electors (leaderelection with a
// LeaseLock) and fence electors (package election on this Locker) on
// one Lease for several lease durations, the leaders of both kinds
// resigning, crashing (stopping without release, then starting afresh)
// and pausing (cut off from the server for longer than a lease). It
// records every leading interval, from the leader's start callback to
// the moment the leader's context ended or it gave up, all on this
// process's monotonic clock (so no clock skew enters the check), and
// checks that no two overlap, with no margin: each interval must end
// before the next one starts. It also checks that leadership moved
// from each kind to the other.
//
// CheckerCatchesAnIgnoredHolder runs the same with fence Lockers that
// take a Lease held by a client-go elector as free: the check must find
// an overlap, or it proves nothing.
func TestInteropWithClientGo(t *testing.T) {
	t.Parallel()
	_, cfg := adminClient(t)
	t.Run("NoTwoLeaders", func(t *testing.T) {
		t.Parallel()
		ns := kubetest.Namespace(t, cfg)
		rec := runInterop(t, cfg, ns, 30*time.Second, false)
		if o := rec.overlaps(); len(o) > 0 {
			t.Fatalf("leading intervals overlap:\n%s", rec)
		}
		toFence, toClientGo := rec.handOvers()
		t.Logf("%d terms, %d hand-overs client-go→fence, %d fence→client-go", len(rec.intervals), toFence, toClientGo)
		if toFence == 0 || toClientGo == 0 {
			t.Fatalf("leadership did not move both ways between the kinds:\n%s", rec)
		}
	})
	t.Run("CheckerCatchesAnIgnoredHolder", func(t *testing.T) {
		t.Parallel()
		ns := kubetest.Namespace(t, cfg)
		rec := runInterop(t, cfg, ns, 12*time.Second, true)
		if len(rec.overlaps()) == 0 {
			t.Fatalf("fence electors ignoring client-go's holder, yet no overlap was found:\n%s", rec)
		}
	})
}

// interval is one leader's term.
type interval struct {
	who        string
	start, end time.Time
}

// recorder collects leading intervals.
type recorder struct {
	mu        sync.Mutex
	t0        time.Time
	intervals []interval
	open      map[string]time.Time
}

func newRecorder() *recorder { return &recorder{t0: time.Now(), open: map[string]time.Time{}} }

func (r *recorder) start(who string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open[who] = time.Now()
}

func (r *recorder) end(who string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.open[who]; ok {
		r.intervals = append(r.intervals, interval{who: who, start: s, end: now})
		delete(r.open, who)
	}
}

// sorted returns the intervals by start.
func (r *recorder) sorted() []interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.intervals)
	slices.SortFunc(out, func(a, b interval) int { return a.start.Compare(b.start) })
	return out
}

// overlaps returns every pair of intervals that overlap.
func (r *recorder) overlaps() [][2]interval {
	iv := r.sorted()
	var out [][2]interval
	for i := range iv {
		for j := i + 1; j < len(iv); j++ {
			if iv[j].start.Before(iv[i].end) {
				out = append(out, [2]interval{iv[i], iv[j]})
			}
		}
	}
	return out
}

// handOvers counts the terms that followed a term of the other kind.
func (r *recorder) handOvers() (toFence, toClientGo int) {
	iv := r.sorted()
	for i := 1; i < len(iv); i++ {
		a, b := kind(iv[i-1].who), kind(iv[i].who)
		switch {
		case a == "client-go" && b == "fence":
			toFence++
		case a == "fence" && b == "client-go":
			toClientGo++
		}
	}
	return toFence, toClientGo
}

func kind(who string) string {
	if len(who) >= 5 && who[:5] == "fence" {
		return "fence"
	}
	return "client-go"
}

func (r *recorder) String() string {
	var s string
	for _, iv := range r.sorted() {
		s += fmt.Sprintf("  %-12s %8.3fs – %8.3fs\n", iv.who, iv.start.Sub(r.t0).Seconds(), iv.end.Sub(r.t0).Seconds())
	}
	return s
}

// switchable is a transport that can be cut off from the server: while
// dead, every request fails at once.
type switchable struct {
	next http.RoundTripper
	dead atomic.Bool
	// stopped cuts it off for good, whatever dead says: the end of a run.
	stopped atomic.Bool
}

func (s *switchable) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.dead.Load() || s.stopped.Load() {
		return nil, errors.New("test: cut off from the API server")
	}
	return s.next.RoundTrip(r)
}

// cutOff returns a copy of cfg whose requests go through a switchable.
func cutOff(cfg *rest.Config) (*rest.Config, *switchable) {
	sw := &switchable{}
	c := rest.CopyConfig(cfg)
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		sw.next = rt
		return sw
	}
	return c, sw
}

// action is what a leader does after leading for a while.
type action int

const (
	resign action = iota
	crash
	pause
)

func pick() (action, time.Duration) {
	return action(rand.IntN(3)), 300*time.Millisecond + rand.N(1200*time.Millisecond)
}

// runInterop runs three electors of each kind on one Lease of ns for
// about d, and returns what they recorded.
func runInterop(t *testing.T, cfg *rest.Config, ns string, d time.Duration, ignoreForeign bool) *recorder {
	rec := newRecorder()
	ctx, cancel := context.WithCancel(t.Context())
	var (
		wg       sync.WaitGroup
		cgSwitch []*switchable
		mu       sync.Mutex
	)
	const key = "interop-leader"
	for i := range 3 {
		who := fmt.Sprintf("client-go-%d", i)
		c, sw := cutOff(cfg)
		mu.Lock()
		cgSwitch = append(cgSwitch, sw)
		mu.Unlock()
		wg.Go(func() { clientGoElector(t, ctx, c, sw, ns, key, who, rec) })
	}
	for i := range 3 {
		who := fmt.Sprintf("fence-%d", i)
		wg.Go(func() { fenceElector(t, ctx, cfg, ns, key, who, rec, ignoreForeign) })
	}
	time.Sleep(d)
	// Stop: cut client-go off first, so that its release on cancel
	// (written before its leader's context ends) hands nothing over.
	mu.Lock()
	for _, sw := range cgSwitch {
		sw.stopped.Store(true)
	}
	mu.Unlock()
	cancel()
	wg.Wait()
	return rec
}

// clientGoElector runs client-go electors one after the other until ctx
// ends: each leads until it loses the Lease, or resigns (ending its work,
// then cancelling its Run, which releases the Lease), crashes (ending its
// work and going silent: no release) or pauses (cut off from the server
// until it loses the Lease).
func clientGoElector(t *testing.T, ctx context.Context, cfg *rest.Config, sw *switchable, ns, key, who string, rec *recorder) {
	client := clientFor(t, cfg)
	for ctx.Err() == nil {
		sw.dead.Store(false)
		runCtx, cancelRun := context.WithCancel(ctx)
		var crashed atomic.Bool
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: key, Namespace: ns},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: who + "-" + fence.NewOwnerID()[:8]},
		}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   cgLeaseDuration,
			RenewDeadline:   cgRenewDeadline,
			RetryPeriod:     cgRetryPeriod,
			ReleaseOnCancel: true,
			Name:            who,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(leadCtx context.Context) {
					rec.start(who)
					act, hold := pick()
					select {
					case <-leadCtx.Done():
						rec.end(who)
						return
					case <-time.After(hold):
					}
					switch act {
					case resign:
						rec.end(who)
						cancelRun()
					case crash:
						rec.end(who)
						crashed.Store(true)
						sw.dead.Store(true)
						cancelRun()
					case pause:
						sw.dead.Store(true)
						time.AfterFunc(pauseFor, func() {
							if !crashed.Load() && ctx.Err() == nil {
								sw.dead.Store(false)
							}
						})
						<-leadCtx.Done()
						rec.end(who)
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			t.Errorf("NewLeaderElector: %v", err)
			cancelRun()
			return
		}
		le.Run(runCtx)
		cancelRun()
		if crashed.Load() {
			sleep(ctx, cgLeaseDuration/2) // down for a while, then a fresh start
		}
	}
}

// fenceElector runs fence candidates one after the other until ctx ends,
// each a fresh process (a Locker and Session of its own, that has seen
// nothing), leading as clientGoElector's do.
func fenceElector(t *testing.T, ctx context.Context, base *rest.Config, ns, key, who string, rec *recorder, ignoreForeign bool) {
	for ctx.Err() == nil {
		cfg, sw := cutOff(base)
		l := newLocker(t, clientFor(t, cfg), ns, nil, nil)
		l.d.ignoreForeign = ignoreForeign
		s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: fenceTTL})
		if err != nil {
			t.Errorf("NewSession: %v", err)
			return
		}
		c, err := election.New(s, key, nil)
		if err != nil {
			t.Errorf("election.New: %v", err)
			return
		}
		campCtx, stop := context.WithCancel(ctx)
		var crashed atomic.Bool
		_ = c.Campaign(campCtx, func(tctx context.Context, _ *fence.Handle) error {
			rec.start(who)
			act, hold := pick()
			select {
			case <-tctx.Done():
				rec.end(who)
				return nil
			case <-time.After(hold):
			}
			switch act {
			case resign:
				rec.end(who)
			case crash:
				rec.end(who)
				crashed.Store(true)
				sw.dead.Store(true)
				stop()
			case pause:
				sw.dead.Store(true)
				time.AfterFunc(pauseFor, func() {
					if !crashed.Load() {
						sw.dead.Store(false)
					}
				})
				<-tctx.Done()
				rec.end(who)
			}
			return nil
		})
		stop()
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = s.Close(closeCtx)
		cancel()
		if crashed.Load() {
			sleep(ctx, fenceTTL/2)
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
