package torture

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// Result is what one run did and what the checker found.
type Result struct {
	Pair    string
	Control bool
	// Processes is true when the workers ran as processes of their own,
	// with process faults (see Config.Processes).
	Processes bool
	// Transfer is true for a run of the transfer workload (see
	// Config.Transfer): its writes are transfers, its Verdict the
	// ledger's (Stored counts the transfers recorded), and it has no
	// linearizability check.
	Transfer bool
	// Elapsed is the run's length, read-back and checks excluded.
	Elapsed time.Duration
	// Leases counts the leases taken, LeasesLost those that ended lost
	// (fence.ErrLeaseLost); Writes the write attempts, split by outcome
	// in Applied, Stale, Unknown and Failed.
	Leases, LeasesLost, Writes, Applied, Stale, Unknown, Failed int
	// LongJobs lists the leases held for several TTLs (see
	// Config.LongJobChance), the run's guaranteed one included.
	LongJobs []LongJob
	// Refused lists the releases refused after renewals (see Refusal).
	// Under faults one can follow a loss the guard could not see, so they
	// are reported; the guaranteed long job's must not happen (see
	// LongJobErr).
	Refused []Refusal
	// Faults counts the faults injected, by kind (see FaultKinds).
	Faults map[string]int
	// Disruptions counts, by name, the disruptions the run registered
	// (like "postgres-restart", "etcd-leader-kill", "cut-all HOST") and
	// how many times each ran to its end.
	Disruptions map[string]int
	Verdict     Verdict
	Linear      Linearizability
	// Allowed is the locker's LockerKind.Expected (nil when none);
	// Expected lists the violations of the kinds it allows, taken out of
	// Verdict and Linear (see Expected). A fenced run with Allowed set
	// fails when Expected is empty: the documented hazard did not show.
	Allowed  *Expected
	Expected []Violation
}

// Mode is "fenced" or "control", followed by "/transfer" for the
// transfer workload and "/procs" when the workers ran as processes.
func (r *Result) Mode() string {
	m := "fenced"
	if r.Control {
		m = "control"
	}
	if r.Transfer {
		m += "/transfer"
	}
	if r.Processes {
		m += "/procs"
	}
	return m
}

// Violations counts what breaks the contract: the checker's violations
// plus the resources whose history porcupine found illegal.
func (r *Result) Violations() int { return len(r.Verdict.Violations) + r.Linear.Illegal }

// Err says why the run failed, or returns nil: a fenced run fails on any
// violation, lost write or illegal history; a control run fails when it
// found no violation (the faults were too weak to show anything). Either
// fails when the store refused the guaranteed long job's release (see
// LongJobErr).
func (r *Result) Err() error {
	return errors.Join(r.fencingErr(), r.LongJobErr(), r.expectedErr())
}

// expectedErr fails a fenced run of a locker with expected violations
// (LockerKind.Expected) that showed none of them: the run was meant to
// demonstrate the hazard its backend documents, and did not.
func (r *Result) expectedErr() error {
	if r.Control || r.Allowed == nil || len(r.Expected) > 0 {
		return nil
	}
	return fmt.Errorf("%s fenced: the failover did not show the documented hazard (expected %v: %s; %d leases, faults %s)",
		r.Pair, r.Allowed.Kinds, r.Allowed.Why, r.Leases, FormatCounts(r.Faults))
}

func (r *Result) fencingErr() error {
	if r.Control {
		if r.Violations() == 0 {
			return fmt.Errorf("%s control: no violation found without fencing (%d writes, faults %s): the faults are too weak to prove anything", r.Pair, r.Writes, FormatCounts(r.Faults))
		}
		return nil
	}
	var errs []error
	for _, v := range first(r.Verdict.Violations, 10) {
		errs = append(errs, errors.New(v.String()))
	}
	for _, a := range first(r.Verdict.Lost, 10) {
		errs = append(errs, fmt.Errorf("acknowledged write lost: %v", a))
	}
	if r.Verdict.Overwritten > 0 {
		// The workers claim each name before reading it (see
		// fence.Resource.Claim), so no stale write lands between a
		// read and the write that follows it.
		errs = append(errs, fmt.Errorf("%d acknowledged writes overwritten by a holder that read before they landed, although it claimed the name first", r.Verdict.Overwritten))
	}
	if r.Linear.Illegal > 0 {
		errs = append(errs, fmt.Errorf("porcupine: no fenced register could produce the history of %v", r.Linear.IllegalNames))
	}
	if len(errs) == 0 {
		return nil
	}
	head := fmt.Errorf("%s fenced: %d violations, %d acknowledged writes lost, %d overwritten, %d illegal histories",
		r.Pair, len(r.Verdict.Violations), len(r.Verdict.Lost), r.Verdict.Overwritten, r.Linear.Illegal)
	return errors.Join(append([]error{head}, errs...)...)
}

// LongJobErr fails a run in which the store refused to release the
// guaranteed long job after its renewals, no loss having been seen before
// and the refusal coming while its latest renewal still ran:
// on a key of its own and off the faults, the likely cause is the release
// itself (one that carries the lease as it was before its renewals, say).
// A guaranteed long job lost before its release (the guard saw its
// renewals fail, as under heavy load) is only reported, in LongJobs and
// the table.
func (r *Result) LongJobErr() error {
	var errs []error
	for _, x := range r.Refused {
		if x.Clean {
			errs = append(errs, errors.New(x.String()))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	head := fmt.Errorf("%s %s: the guaranteed long job's release was refused after its renewals (%d times)", r.Pair, r.Mode(), len(errs))
	return errors.Join(append([]error{head}, first(errs, 5)...)...)
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// Run runs pair under cfg: it sets the backends up, runs the workers with
// faults for cfg.Duration, reads the resources back without faults and
// checks them. The error reports a run that could not be set up or read
// back (errors.Is ErrUnavailable when a backend is not configured); the
// verdict is in the Result (see Result.Err).
func Run(ctx context.Context, pair Pair, cfg Config) (*Result, error) {
	cfg.fill()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	stage, err := newStage(cfg.Net, logf)
	if err != nil {
		return nil, err
	}
	defer stage.close()
	newLocker, err := pair.Locker.open(ctx, stage)
	if err != nil {
		return nil, fmt.Errorf("torture: %s: set up locker: %w", pair.Name(), err)
	}
	var keys []string
	for i := range cfg.Keys {
		keys = append(keys, fmt.Sprintf("%s-k%d", stage.ID, i))
	}
	var work, clean resource
	var led, cleanLed *ledger // a transfer run's, through the faults and without
	if cfg.Transfer {
		led, cleanLed, err = openLedgers(ctx, stage, pair.Resource, keys, !cfg.Control)
	} else {
		work, clean, err = pair.Resource.open(ctx, stage, !cfg.Control)
	}
	if err != nil {
		return nil, fmt.Errorf("torture: %s: set up resource: %w", pair.Name(), err)
	}
	rec := &Recorder{}
	var procs *procRun
	if cfg.Processes {
		if procs, err = newProcRun(ctx, pair, &cfg, stage, keys, rec, logf); err != nil {
			return nil, fmt.Errorf("torture: %s: %w", pair.Name(), err)
		}
	}
	pauseBegun, awaited := &atomic.Bool{}, &atomic.Pointer[string]{}
	var workers []*worker
	for i := range cfg.Workers {
		if procs != nil {
			break // the workers are processes
		}
		w, err := newWorker(i+1, &cfg, pair.Locker, newLocker, stage, keys, work, clean, rec)
		if err != nil {
			return nil, fmt.Errorf("torture: %s: worker %d: %w", pair.Name(), i+1, err)
		}
		w.pauseBegun, w.awaited = pauseBegun, awaited
		w.ledger = led
		workers = append(workers, w)
	}
	// The last worker's first lease is the guaranteed long job, on a key
	// of its own so that it starts at once; worker 1 keeps its
	// guaranteed pause, so a run needs two workers for it.
	if cfg.Workers >= 2 && procs == nil {
		workers[cfg.Workers-1].longKey = stage.ID + "-long"
	}

	if procs != nil {
		if err := procs.prepare(ctx, stage.ID+"-long"); err != nil {
			return nil, fmt.Errorf("torture: %s: start the workers: %w", pair.Name(), err)
		}
	}
	if cfg.SetUp != nil {
		if err := cfg.SetUp(ctx); err != nil {
			return nil, fmt.Errorf("torture: %s: %w", pair.Name(), err)
		}
	}
	res := &Result{Pair: pair.Name(), Control: cfg.Control, Processes: procs != nil, Transfer: cfg.Transfer}
	if cfg.Processes && procs == nil {
		logf("%s %s: a store lives in this process: the workers run in it", pair.Name(), res.Mode())
	}
	logf("%s %s: %d workers on %d keys for %v", pair.Name(), res.Mode(), cfg.Workers, cfg.Keys, cfg.Duration)
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	deadline, _ := runCtx.Deadline()
	for _, w := range workers {
		w.deadline = deadline
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.loop(runCtx) })
	}
	if procs != nil {
		wg.Go(func() { procs.run(runCtx, stage.ID+"-long") })
	}
	wg.Go(func() { disrupt(runCtx, stage, cfg.DisruptEvery, logf) })
	wg.Wait()
	res.Elapsed = time.Since(start)

	attempts := rec.Attempts()
	var stored map[string][]Entry
	if cfg.Transfer {
		res.Verdict, err = checkTransfers(ctx, cleanLed, keys, attempts)
	} else {
		stored, err = readBack(ctx, clean, attempts)
	}
	if err != nil {
		return nil, fmt.Errorf("torture: %s: read back: %w", pair.Name(), err)
	}
	res.Leases, res.LeasesLost = rec.Leases(), rec.LeasesLost()
	res.LongJobs, res.Refused = rec.LongJobs(), rec.Refused()
	res.Faults = stage.Counts.Snapshot()
	res.Disruptions = stage.disrupted()
	for _, a := range attempts {
		res.Writes++
		switch a.Outcome {
		case Applied:
			res.Applied++
		case Stale:
			res.Stale++
		case Unknown:
			res.Unknown++
		default:
			res.Failed++
		}
	}
	if !cfg.Transfer {
		res.Verdict = Check(attempts, stored)
		res.Linear = CheckLinearizable(attempts, rec.Reads(), cfg.LinearTimeout)
	}
	// The locker's tokens, from the leases taken; Sent is read on the
	// workers' clocks, off by up to twice MaxSkew.
	res.Verdict.Violations = append(res.Verdict.Violations, CheckLeases(rec.LeasesTaken(), 2*pair.Locker.MaxSkew)...)
	res.Allowed = pair.Locker.Expected
	res.Expected = splitExpected(res.Allowed, cfg.Control, &res.Verdict, &res.Linear, attempts)
	return res, nil
}

func newWorker(id int, cfg *Config, kind LockerKind, newLocker newLocker, s *Stage, keys []string, res, clean resource, rec *Recorder) (*worker, error) {
	off := skewFor(kind, s)
	clock := clockAt(kind, off)
	l, err := newLocker(id, clock)
	if err != nil {
		return nil, err
	}
	return buildWorker(id, cfg, kind.TTL, clock, l, s, keys, res, clean, rec)
}

// skewFor draws a worker's clock offset, for a locker in trusted-clock
// mode (see LockerKind.MaxSkew), and counts it; 0 for the others.
func skewFor(kind LockerKind, s *Stage) time.Duration {
	if kind.MaxSkew <= 0 {
		return 0
	}
	s.Counts.Add(FaultSkew)
	return randDuration(-2*kind.MaxSkew, 2*kind.MaxSkew)
}

// clockAt returns the clock of a worker whose offset is off.
func clockAt(kind LockerKind, off time.Duration) fence.Clock {
	if kind.MaxSkew <= 0 {
		return fence.SystemClock{}
	}
	return SkewedClock{Offset: off}
}

// buildWorker returns worker id on locker l, reading time from clock.
func buildWorker(id int, cfg *Config, ttl time.Duration, clock fence.Clock, l *fence.Locker, s *Stage, keys []string, res, clean resource, rec recorder) (*worker, error) {
	p := &pausable{}
	pl, err := p.wrap(l)
	if err != nil {
		return nil, err
	}
	watch := &leaseWatch{clock: clock}
	pl.SetObserver(watch.observer())
	sess, err := fence.NewSession(pl, &fence.SessionOptions{
		TTL: ttl,
		// At least 10 s: on a loaded machine one attempt through the
		// run's proxies can take longer than two short TTLs, and a
		// timeout that cancels every attempt midway (dropping its
		// connection, so the next one dials again) left whole pairs
		// without a lease (wait, below).
		BackoffMin: ttl / 50,
		BackoffMax: ttl / 5,
		// A waiting worker tries a busy key at least every TTL/5 (the
		// longest step of the backoff it used to retry on), besides
		// waking on releases and at the holder's expiry.
		PollInterval: ttl / 5,
		Clock:        clock,
	})
	if err != nil {
		return nil, err
	}
	return &worker{
		id: id, cfg: cfg, keys: keys, sess: sess, wait: max(2*ttl, 10*time.Second), locker: p,
		res: res, clean: clean, stage: s, rec: rec, calmly: s.calmly, ttl: ttl, watch: watch, epoch: map[string]int{},
	}, nil
}

// disrupt runs the stage's disruptors in turn until ctx ends.
func disrupt(ctx context.Context, s *Stage, every time.Duration, logf func(string, ...any)) {
	if every < 0 {
		return
	}
	for i := 0; ; i++ {
		if backoff.Sleep(ctx, randDuration(every/2, every*3/2)) != nil {
			return
		}
		// Read at each turn: the HTTP path's outages join at its first
		// request (see Stage.HTTPClient).
		ds := s.disruptors()
		if len(ds) == 0 {
			continue
		}
		d := ds[i%len(ds)]
		s.calm.Lock()
		err := d.run(ctx)
		s.calm.Unlock()
		if err == nil {
			d.done.Add(1)
		}
		if err != nil && ctx.Err() == nil {
			logf("disruption %s: %v", d.name, err)
		}
	}
}

// readBack reads the list of every name written, through the clean
// resource.
func readBack(ctx context.Context, clean resource, attempts []Attempt) (map[string][]Entry, error) {
	stored := map[string][]Entry{}
	for _, a := range attempts {
		if _, ok := stored[a.Name]; ok {
			continue
		}
		v, _, err := clean.Get(ctx, a.Name)
		if errors.Is(err, fence.ErrNotFound) {
			stored[a.Name] = nil
			continue
		}
		if err != nil {
			return nil, err
		}
		list, err := decodeEntries(a.Name, v)
		if err != nil {
			return nil, err
		}
		stored[a.Name] = list
	}
	return stored, nil
}
