package election

import (
	"context"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// ObserveOptions configure a Follower. A nil *ObserveOptions, and every
// zero field, means the documented default; Observe rejects negative
// durations with an error matching fence.ErrInvalid.
type ObserveOptions struct {
	// PollInterval is the longest the follower goes without reading the
	// key (each wait is drawn from [PollInterval/2, PollInterval]). It
	// bounds how late a follower learns what the store does not push: on
	// a store that sends no notifications, or while subscribing to them
	// fails (the follower subscribes again before each poll). Besides, the
	// follower reads the key when the store notifies it and when the
	// leader's lease is due to run out. Default: 1 s.
	PollInterval time.Duration
	// CallTimeout bounds each read of the key and each attempt to
	// subscribe to its notifications. Default: 10 s.
	CallTimeout time.Duration
	// Clock is the clock of the Locker (the one its backend's options
	// set), on which Leader.ValidUntil is read and the follower waits.
	// Default: the system clock.
	Clock fence.Clock
}

// expiryBackoff spaces the reads after a leader's expiry that find its
// lease unchanged.
var expiryBackoff = backoff.Policy{First: 10 * time.Millisecond, Max: time.Second}

// Defaults of ObserveOptions.
const (
	defaultPoll        = time.Second
	defaultCallTimeout = 10 * time.Second
)

// Follower follows the leader of one key without campaigning: a replica
// that routes requests to the leader, a dashboard. Create it with
// Observe. Its methods are safe for concurrent use.
type Follower struct {
	locker *fence.Locker
	key    string
	poll   time.Duration
	call   time.Duration
	clock  fence.Clock
	notify driver.ReleaseNotifier // nil when the driver sends no news
	c      chan Change

	mu  sync.Mutex
	cur Leader // as last read

	// Of the watching goroutine only.
	shown        Leader // the Leader of the last Change put in c
	pendingFirst bool   // c may still hold the first Change
	sub          <-chan struct{}
	unsub        func()
}

// Observe follows the leader of key through locker until ctx is done:
// subscribes to the store's notifications where its driver sends them
// (driver.ReleaseNotifier), reads the key once, and returns. From then on
// the Follower reads the key again when the store signals a release, a
// break or a Publish of the key, when the leader's lease is due to run
// out, and at least every PollInterval, and reports each change: a term
// started (with its value), a term ended (released, expired), the value
// changed.
//
// On a store that notifies, a change after Observe returned is read as
// soon as the store signals it (the subscription is active before the
// first read): at once where the store pushes, within its probe interval
// where the driver probes. On the others it is read within a
// PollInterval. A state that comes and goes between
// two reads (a term started and ended) is not seen. Only the last state
// counts: a follower that reads Changes late gets the latest, compared
// with what it took before, and the watch never waits for it.
//
// While the key cannot be read (the store is down, a read times out), the
// follower keeps the last state it read and tries again at the next
// poll; each failed read goes to the observer of locker
// (fence.Locker.SetObserver). Observe returns an error matching
// fence.ErrInvalid for a nil locker, a key the locker refuses or a
// negative option, and the store's error when the first read fails.
func Observe(ctx context.Context, locker *fence.Locker, key string, opts *ObserveOptions) (*Follower, error) {
	if locker == nil {
		return nil, invalid("locker", "nil")
	}
	if err := driver.ValidateKey("key", key, driver.InfoOf(locker).MaxKeyLen); err != nil {
		return nil, err
	}
	var o ObserveOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.PollInterval < 0:
		return nil, invalid("PollInterval", "%v is negative", o.PollInterval)
	case o.CallTimeout < 0:
		return nil, invalid("CallTimeout", "%v is negative", o.CallTimeout)
	}
	f := &Follower{locker: locker, key: key, poll: o.PollInterval, call: o.CallTimeout, clock: driver.ClockOrSystem(o.Clock), c: make(chan Change, 1)}
	if f.poll == 0 {
		f.poll = defaultPoll
	}
	if f.call == 0 {
		f.call = defaultCallTimeout
	}
	f.notify, _ = driver.LockerOf(locker).(driver.ReleaseNotifier)
	f.subscribe(ctx)
	info, _, err := f.read(ctx)
	if err != nil {
		f.unsubscribe()
		return nil, err
	}
	f.cur = leaderOf(info)
	f.shown = f.cur
	f.c <- Change{Leader: f.cur}
	f.pendingFirst = true
	go f.watch(ctx)
	return f, nil
}

// Leader returns the leader as the follower last read it and true, or
// false when nobody leads. It does no I/O.
func (f *Follower) Leader() (Leader, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur, f.cur.Term != 0
}

// Changes returns the channel of the follower's changes. It holds at
// most one Change: the first shows the state Observe read; when a newer
// one comes before the last was taken, the two become one (see Change).
// It is closed once the context given to Observe is done and the
// follower has stopped.
func (f *Follower) Changes() <-chan Change {
	return f.c
}

// watch reads the key whenever it may have changed, until ctx is done.
func (f *Follower) watch(ctx context.Context) {
	defer close(f.c)
	defer f.unsubscribe()
	// late counts the reads in a row that found the lease held but due
	// to have run out already (the store's clock a little behind ours, a
	// store that sees an expiry only on its next write): the next read at
	// the expiry backs off, up to a PollInterval, instead of spinning.
	late := 0
	failed := false // the last read failed: wait for the next poll
	for {
		f.mu.Lock()
		cur := f.cur
		f.mu.Unlock()
		wait := backoff.Jitter(f.poll)
		if until := cur.ValidUntil; cur.Term != 0 && !until.IsZero() && !failed {
			d := until.Sub(f.clock.Now()) + time.Millisecond
			if late > 0 {
				d = max(d, expiryBackoff.Delay(late))
			}
			wait = max(min(wait, d), 0)
		}
		t := f.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case _, ok := <-f.sub:
			t.Stop()
			if !ok { // not the contract's way, but a closed channel must not spin
				f.unsubscribe()
			}
		case <-t.C():
		}
		if f.sub == nil {
			f.subscribe(ctx)
		}
		info, answered, err := f.read(ctx)
		if failed = err != nil; failed {
			continue // kept for the next poll; the Locker's observer saw it
		}
		if next := leaderOf(info); next.Term != 0 && !next.ValidUntil.IsZero() && !next.ValidUntil.After(f.clock.Now()) {
			late++
		} else {
			late = 0
		}
		f.update(info, answered)
	}
}

// read inspects the key, bounded by CallTimeout, and returns what it found
// and when the answer came, on the clock: the store judged the lease at
// some moment before that.
func (f *Follower) read(ctx context.Context) (fence.LockInfo, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, f.call)
	defer cancel()
	info, err := f.locker.Inspect(ctx, f.key)
	return info, f.clock.Now(), err
}

// update records what a read answered at answered found, and reports the change:
// in the channel first, so that a reader who sees the new state in
// Leader finds it in Changes too.
func (f *Follower) update(info fence.LockInfo, answered time.Time) {
	next := leaderOf(info)
	f.mu.Lock()
	prev := f.cur // only this goroutine writes cur
	f.mu.Unlock()
	if next.Term != prev.Term || next.Value != prev.Value {
		f.emit(Change{Previous: f.shown, Leader: next, Ended: endOf(prev, next, info.Token, answered)})
	}
	f.mu.Lock()
	f.cur = next
	f.mu.Unlock()
}

// emit puts ch in the channel: in place of the Change the reader has not
// taken yet, if any, merged with it. It never blocks: only this goroutine
// sends, and it empties the buffer first.
func (f *Follower) emit(ch Change) {
	select {
	case old := <-f.c:
		ch = merge(old, ch)
	default:
		f.pendingFirst = false
	}
	f.shown = ch.Leader
	if ch.empty() && !f.pendingFirst {
		return
	}
	f.c <- ch
}

// subscribe subscribes to the key's notifications if the driver sends
// them; on failure f.sub stays nil and the follower polls.
func (f *Follower) subscribe(ctx context.Context) {
	if f.notify == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, f.call)
	defer cancel()
	c, stop, err := f.notify.NotifyRelease(ctx, f.key)
	if err != nil || c == nil {
		if stop != nil {
			stop()
		}
		return
	}
	f.sub, f.unsub = c, stop
}

func (f *Follower) unsubscribe() {
	if f.unsub != nil {
		f.unsub()
		f.sub, f.unsub = nil, nil
	}
}
