// Package probe wakes the waiters of a key on a store that cannot push
// news of a release (DynamoDB, Cloud Storage, Azure Blob Storage): while
// a fence.Session.Lock (or an election's follower) waits for a key, a
// Prober reads the key's record every interval, with the cheapest read
// the store has, and signals the waiters when the record shows the lease
// ended: released, broken, taken over, or run out (the time the backend
// computes for this process, from a clock-free observation or a trusted
// clock), and when the holder published another value (Locker.Publish). It implements
// driver.ReleaseNotifier for lockers/dynamo, lockers/azblob and
// internal/objlock (lockers/gcs and lockers/s3).
//
// A Prober reads each waited-for key once per interval, however many
// waiters of its Locker wait for it, and stops reading a key when its
// last waiter stops.
package probe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/notify"
	"github.com/fencekit/fence/internal/urlparam"
)

const (
	// DefaultInterval is the probe interval of a backend whose option is
	// zero.
	DefaultInterval = 100 * time.Millisecond
	// MinInterval is the shortest probe interval accepted.
	MinInterval = 10 * time.Millisecond
	// Off, as a backend's probe interval option, turns probes off:
	// waiters then poll at fence.SessionOptions.PollInterval.
	Off time.Duration = -1
)

// Interval returns the probe interval an option d asks for: DefaultInterval
// for 0, 0 (no probes) for a negative d, d itself otherwise; or a
// *fence.InvalidError naming field for a positive d below MinInterval.
func Interval(field string, d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultInterval, nil
	case d < 0:
		return 0, nil
	case d < MinInterval:
		return 0, &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%v is below %v (a negative interval turns probes off)", d, MinInterval)}
	}
	return d, nil
}

// URLForm is the part of a URL form that FromURL reads.
const URLForm = "probe-interval=D|off"

// FromURL reads the probe-interval parameter of a store URL: a duration
// of at least MinInterval, or "off" (Off). It returns 0 (the default)
// when absent.
func FromURL(p *urlparam.Params) time.Duration {
	switch v := p.String("probe-interval"); v {
	case "":
		return 0
	case "off":
		return Off
	default:
		d := p.Duration("probe-interval")
		if d < MinInterval {
			p.Fail("probe-interval=%q is below %v (or off)", v, MinInterval)
		}
		return d
	}
}

// Reading is what one read of a key's record showed.
type Reading struct {
	// Version changes on every change of the record that may matter to
	// a waiter (any write, and on Azure a change of the lease state).
	// "" for a missing record.
	Version string
	// Holder names the lease the record holds (its owner and token), ""
	// when it holds none.
	Holder string
	// Ends is when that lease ends for this process, on the Prober's
	// clock: a clock-free observation's end, or a trusted expiry plus
	// the skew allowance. Zero when unknown or when no lease is held.
	Ends time.Time
	// Value is the value published with that lease (fence.LockInfo.Value),
	// "" when none or when no lease is held.
	Value string
}

// ReadFunc reads key's record. prev is the last reading of key (zero for
// the first), for a conditional read: it may return prev, with Ends
// brought up to date, when the store says nothing changed.
type ReadFunc func(ctx context.Context, key string, prev Reading) (Reading, error)

// Prober probes the keys its subscribers wait for. It is safe for
// concurrent use.
type Prober struct {
	every time.Duration
	clock fence.Clock
	read  ReadFunc
	hub   notify.Hub

	mu    sync.Mutex
	loops map[string]*loop
}

// loop is the probing of one key.
type loop struct {
	subs   int
	ready  chan struct{} // closed once the first reading was tried
	cancel context.CancelFunc
}

// New returns a Prober that reads a waited-for key with read every every
// (a positive interval) on clock.
func New(every time.Duration, clock fence.Clock, read ReadFunc) *Prober {
	return &Prober{every: every, clock: clock, read: read, loops: make(map[string]*loop)}
}

// Notify implements driver.ReleaseNotifier.NotifyRelease. The first
// subscriber of a key reads its record before Notify returns, with ctx:
// later changes are measured against that reading, so a release after
// Notify returns is never missed. When that read fails, the first reading
// that succeeds signals the subscribers, whatever it shows.
func (p *Prober) Notify(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	c, unsubscribe := p.hub.Subscribe(key)
	p.mu.Lock()
	l := p.loops[key]
	first := l == nil
	if first {
		l = &loop{ready: make(chan struct{})}
		p.loops[key] = l
	}
	l.subs++
	p.mu.Unlock()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			unsubscribe()
			p.mu.Lock()
			defer p.mu.Unlock()
			if l.subs--; l.subs == 0 {
				delete(p.loops, key)
				<-l.ready // set by the first subscriber without blocking
				l.cancel()
			}
		})
	}
	if first {
		prev, err := p.read(ctx, key, Reading{})
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		l.cancel = cancel
		close(l.ready)
		go p.run(lctx, key, prev, err == nil)
	} else {
		select {
		case <-l.ready:
		case <-ctx.Done():
			stop()
			return nil, nil, context.Cause(ctx)
		}
	}
	return c, stop, nil
}

// run probes key until ctx ends, starting from prev (known is false when
// there is no reading yet).
func (p *Prober) run(ctx context.Context, key string, prev Reading, known bool) {
	endSignalled := false // for prev's lease
	for {
		wait := p.every
		if known && !endSignalled && !prev.Ends.IsZero() {
			wait = min(wait, max(prev.Ends.Sub(p.clock.Now()), 0))
		}
		t := p.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if known && !endSignalled && !prev.Ends.IsZero() && !p.clock.Now().Before(prev.Ends) {
			// The lease ends for this process now: a waiter's attempt
			// may take it over.
			endSignalled = true
			p.hub.Signal(key)
			continue
		}
		r, err := p.read(ctx, key, prev)
		if err != nil {
			continue // a failed read wakes nobody; waiters also poll
		}
		if !known || ended(prev, r) || published(prev, r) {
			p.hub.Signal(key)
		}
		if !known || r.Version != prev.Version || r.Holder != prev.Holder || !r.Ends.Equal(prev.Ends) {
			endSignalled = false
		}
		prev, known = r, true
	}
}

// ended reports whether the change from reading a to reading b means a
// lease ended: the record changed and now holds no lease, or holds
// another than the one a showed. A renewal (same holder) and the taking
// of a free key are not endings.
func ended(a, b Reading) bool {
	if a.Version == b.Version && a.Holder == b.Holder {
		return false
	}
	return b.Holder == "" || a.Holder != "" && b.Holder != a.Holder
}

// published reports whether the change from reading a to reading b shows
// a lease with another value than a showed: its holder published (or
// cleared) one, or a new lease came with one between two reads. A
// renewal that keeps the value is not a change.
func published(a, b Reading) bool {
	return b.Holder != "" && a.Value != b.Value
}

// Keys returns the number of keys being probed.
func (p *Prober) Keys() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.loops)
}
