package torture

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/backoff"
)

// worker is one competitor: it takes leases through its guard and does
// read-modify-writes on the resource with their tokens.
type worker struct {
	id     int
	cfg    *Config
	keys   []string
	sess   *fence.Session
	wait   time.Duration // how long an acquisition waits
	locker *pausable
	res    resource
	clean  resource // res without faults, for the guaranteed stale write
	// ledger, set in a transfer run (Config.Transfer), is the SQL
	// database the worker moves money in, through the stage's faults;
	// res and clean are then nil.
	ledger *ledger
	stage  *Stage // its ID prefixes resource names; its Counts count pauses
	rec    recorder
	// calmly runs f while no disruption runs (Stage.calmly, or a request
	// to the run's process).
	calmly func(f func())
	// proc links a worker process to the run's (nil in the run's own
	// process): see process.go.
	proc *childLink

	ttl      time.Duration // of the worker's leases
	watch    *leaseWatch   // the current lease, as the guard's events tell it
	longKey  string        // the key of the run's guaranteed long job, for its worker
	longDone bool          // whether the guaranteed long job was released

	seq      int
	epoch    map[string]int // per key, the first name that may not be full
	deadline time.Time      // end of the run: no pause begins that would outlast it
	paused   bool           // whether the worker has paused yet
	// pauseBegun is set, for all workers, when worker 1's guaranteed
	// pause begins; random long jobs wait for it, lest one keep worker
	// 1 from a key until its pause no longer fits in the run.
	pauseBegun *atomic.Bool
	// awaited is, for all workers, the key of worker 1's guaranteed
	// pause while it waits for a newer write on the name it read: the
	// others take that key meanwhile, so that the newer write comes even
	// when faults and a loaded machine leave them few writes.
	awaited *atomic.Pointer[string]
}

// loop runs until ctx ends.
func (w *worker) loop(ctx context.Context) {
	if w.ledger != nil {
		w.transferLoop(ctx)
		return
	}
	for ctx.Err() == nil {
		p := w.next()
		dctx := ctx
		if p.clean {
			dctx = WithoutFaults(ctx) // acquisition, renewals, writes and release
		}
		w.watch.reset()
		err := guard.Run(dctx, w.sess, p.key, func(wctx context.Context, h *fence.Handle) error {
			w.rec.leaseTaken(taken(w.id, h))
			w.proc.holding(p.key)
			defer w.proc.holding("")
			if p.long > 0 {
				w.longJob(wctx, h, p.long)
				return nil
			}
			writes := 1 + rand.IntN(3)
			for i := 0; i < writes && wctx.Err() == nil; i++ {
				w.readModifyWrite(wctx, h, i == 0 && w.shouldPause())
			}
			return nil
		}, &fence.LockOptions{Wait: w.wait})
		w.settle(p, err)
		if err != nil && !errors.Is(err, fence.ErrHeld) && !errors.Is(err, fence.ErrLeaseLost) {
			_ = backoff.Sleep(ctx, 50*time.Millisecond) // a store error: do not spin
		}
	}
}

// shouldPause decides whether the worker pauses in its lease: always in
// worker 1's first lease, so that every run has a pause while the others
// compete; then with Config.PauseChance; never when the pause could
// outlast the run.
func (w *worker) shouldPause() bool {
	if time.Until(w.deadline) < maxPause(w.ttl) {
		return false
	}
	if w.id == 1 && !w.paused {
		return true
	}
	return chance(w.cfg.PauseChance)
}

// maxPause is the longest pause for leases of ttl.
func maxPause(ttl time.Duration) time.Duration { return ttl * 5 / 2 }

// pauseFor stops the worker, and its renewals, for 1.5 to 2.5 TTLs while
// it holds h. The run's guaranteed pause then goes on, up to the end of
// the run, until another worker's write with a higher token than h's on
// name (the resource it read) has been applied: a clock-free locker lets
// a contender take over only after it watched the record for a full TTL,
// which can come after 1.5 TTLs, and a control run whose one sure stale
// write found no newer write to undercut would prove nothing.
func (w *worker) pauseFor(h *fence.Handle, guaranteed bool, name string) {
	w.paused = true
	if guaranteed && w.proc != nil {
		w.proc.stop(h, name) // a real stop, by the run's process
		return
	}
	if guaranteed {
		w.pauseBegun.Store(true)
	}
	d := randDuration(w.ttl*3/2, maxPause(w.ttl))
	w.locker.pause(time.Now().Add(d))
	w.stage.Counts.Add(FaultPause)
	time.Sleep(d)
	if guaranteed {
		key := h.Key()
		w.awaited.Store(&key)
		defer w.awaited.Store(nil)
	}
	for guaranteed && time.Now().Before(w.deadline) && !w.rec.appliedAbove(name, h.Token()) {
		w.locker.pause(time.Now().Add(200 * time.Millisecond))
		time.Sleep(50 * time.Millisecond)
	}
	if guaranteed && w.cfg.Logf != nil {
		w.cfg.Logf("%s: worker %d's guaranteed pause on %s (token %d) ended %v before the run's end, a newer write applied: %v",
			w.stage.ID, w.id, name, h.Token(), time.Until(w.deadline).Round(time.Millisecond), w.rec.appliedAbove(name, h.Token()))
	}
}

func (w *worker) name(key string) string {
	return fmt.Sprintf("%s-%s-%d", w.stage.ID, key, w.epoch[key])
}

// read returns the first name of key whose list is not full in res, and
// that list; it records each read. It claims each name with token before
// reading it, and records the claim, so that no write with a lower token lands between the read
// and the write that follows it; a refused claim (a newer holder claimed
// or wrote the name) ends the read-modify-write as a failed read does.
func (w *worker) read(ctx context.Context, res resource, key string, token fence.Token) (string, []Entry, error) {
	for {
		name := w.name(key)
		start := time.Now()
		// Announced, so that a claim in flight when a worker process is
		// killed is recorded as of unknown outcome, as a write is: one
		// that applied unrecorded would make a later refusal look
		// impossible to the linearizability check.
		w.rec.beginClaim(Read{Worker: w.id, Name: name, Start: start, Claim: token})
		err := res.Claim(ctx, name, token)
		w.rec.read(Read{Worker: w.id, Name: name, Start: start, End: time.Now(), Claim: token, Claimed: outcomeOf(err)})
		if err != nil {
			return "", nil, err
		}
		start = time.Now()
		v, _, err := res.Get(ctx, name)
		end := time.Now()
		if errors.Is(err, fence.ErrNotFound) {
			v, err = nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		list, err := decodeEntries(name, v)
		if err != nil {
			return "", nil, err
		}
		last := ""
		if len(list) > 0 {
			last = list[len(list)-1].ID()
		}
		w.rec.read(Read{Worker: w.id, Name: name, Last: last, Start: start, End: end})
		if len(list) < w.cfg.EntriesPerName {
			return name, list, nil
		}
		w.epoch[key]++
	}
}

// readModifyWrite reads the key's list, appends an entry and puts the list
// back with h's token. When paused, the worker stops for longer
// than the TTL before reading or between reading and writing, and then
// writes without looking at its lease, as a process frozen after its last
// check would.
func (w *worker) readModifyWrite(wctx context.Context, h *fence.Handle, paused bool) {
	base := wctx
	if paused {
		base = context.WithoutCancel(wctx)
	}
	// The run's one guaranteed pause: its stale read and write must reach
	// the store after a newer write (see pauseFor), so they go through the
	// resource without faults, and no disruption (a store restart) runs
	// while they do.
	guaranteed := paused && w.id == 1 && !w.paused
	res, calmly := w.res, func(f func()) { f() }
	if guaranteed {
		res, calmly = w.clean, w.calmly
	}
	// The guaranteed pause comes between the read and the write, so
	// that the newer write it waits for is on the name it will write.
	pauseFirst := paused && !guaranteed && rand.IntN(2) == 0
	if pauseFirst {
		w.pauseFor(h, false, "")
	}
	ctx, cancel := context.WithTimeout(base, w.cfg.OpTimeout)
	defer cancel()
	readStart := time.Now()
	var name string
	var list []Entry
	var err error
	calmly(func() { name, list, err = w.read(ctx, res, h.Key(), h.Token()) })
	if err != nil {
		return
	}
	if paused && !pauseFirst {
		w.pauseFor(h, guaranteed, name)
		ctx, cancel = context.WithTimeout(base, w.cfg.OpTimeout)
		defer cancel()
	}
	if !paused && wctx.Err() != nil {
		return // the lease is gone: a careful worker stops here
	}
	w.seq++
	a := Attempt{Worker: w.id, Seq: w.seq, Key: h.Key(), Name: name, Token: h.Token(), ReadStart: readStart, Paused: paused}
	if len(list) > 0 {
		a.Parent = list[len(list)-1].ID()
	}
	value := encodeEntries(append(list, Entry{Worker: w.id, Seq: w.seq, Token: h.Token()}))
	a.Start = time.Now()
	w.rec.begin(a)
	calmly(func() { err = res.Put(ctx, name, h.Token(), value) })
	a.End = time.Now()
	a.Outcome = outcomeOf(err)
	if err != nil {
		a.Err = err.Error()
	}
	w.rec.attempt(a)
}
