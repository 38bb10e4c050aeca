package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
)

type config struct {
	postgres string
	workers  int
	ttl      time.Duration
	pauseTTL time.Duration
	unfenced bool
}

var (
	initialBalances = map[string]int64{"alice": 1000, "bob": 1000, "carol": 1000}
	// jobs is the queue; three adjustments are submitted twice, as a
	// retrying client would.
	jobs = []adjustment{
		{"adj-01", "alice", +120}, {"adj-02", "bob", -40}, {"adj-03", "carol", +75},
		{"adj-04", "alice", -30}, {"adj-02", "bob", -40}, {"adj-05", "bob", +300},
		{"adj-06", "carol", -125}, {"adj-07", "alice", +45}, {"adj-05", "bob", +300},
		{"adj-08", "carol", +10}, {"adj-09", "alice", -60}, {"adj-07", "alice", +45},
	}
	// paused is the adjustment of the worker that pauses past its lease.
	paused = adjustment{"adj-10", "alice", +500}
)

// run plays the scenario and returns what happened.
func run(ctx context.Context, cfg config, out io.Writer) (*report, error) {
	e, err := openEnv(ctx, cfg.postgres)
	if err != nil {
		return nil, err
	}
	defer e.close()
	led, err := setUp(ctx, e, initialBalances)
	if err != nil {
		return nil, err
	}
	led.unfenced = cfg.unfenced
	rep := newReport(e.name, cfg.unfenced)
	lg := &logger{out: out, start: time.Now()}
	lg.printf("ledger on %s; %d workers, lease TTL %v", e.name, cfg.workers, cfg.ttl)
	if cfg.unfenced {
		lg.printf("CONTROL RUN: the ledger does not check tokens")
	}

	queue := make(chan adjustment, len(jobs)+1)
	pausedRead := make(chan struct{})
	var pauserDone sync.WaitGroup
	pauserDone.Add(1)
	go func() {
		defer pauserDone.Done()
		pauser(ctx, cfg, e.locker, led, rep, lg, queue, pausedRead)
	}()
	select {
	case <-pausedRead:
	case <-ctx.Done():
		return nil, ctx.Err()
	}

	for _, j := range jobs {
		queue <- j
	}
	var wg sync.WaitGroup
	for i := 1; i <= cfg.workers; i++ {
		// Each worker stands for a replica: a session of its own.
		sess, err := fence.NewSession(e.locker, &fence.SessionOptions{TTL: cfg.ttl,
			BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond})
		if err != nil {
			return nil, err
		}
		defer sess.Close(context.WithoutCancel(ctx))
		name := fmt.Sprintf("worker-%d", i)
		wg.Go(func() { worker(ctx, name, sess, led, rep, lg, queue) })
	}
	pauserDone.Wait()
	close(queue)
	wg.Wait()
	return rep, rep.check(ctx, led)
}

// worker applies adjustments from queue, each under a guarded lease on its
// account, passing the lease's token to the ledger.
func worker(ctx context.Context, name string, sess *fence.Session, led *ledger, rep *report, lg *logger, queue <-chan adjustment) {
	for adj := range queue {
		key := resourceName(adj.account)
		var token fence.Token // stays 0 if no lease was taken
		err := guard.Run(ctx, sess, key, func(ctx context.Context, h *fence.Handle) error {
			token = h.Token()
			rep.issued(key, h.Token())
			return led.apply(ctx, adj, h.Token(), name, func(cur int64) int64 { return cur + adj.amount })
		}, &fence.LockOptions{Wait: time.Minute})
		rep.outcome(lg, name, adj, token, err)
	}
}

// pauser takes alice's lease with a short TTL, reads her balance, then stops
// as a process does in a long garbage-collection pause: no renewals, no
// checks. Other workers take the lease meanwhile. When it wakes it writes the
// balance it computed before the pause.
func pauser(ctx context.Context, cfg config, locker *fence.Locker, led *ledger, rep *report, lg *logger,
	queue chan<- adjustment, pausedRead chan<- struct{}) {
	const name = "paused-worker"
	key := resourceName(paused.account)
	// pausedRead is closed once: when the balance is read, or on the way
	// out if the pauser fails before that, so run never waits for it.
	signalled := false
	signal := func() {
		if !signalled {
			signalled = true
			close(pausedRead)
		}
	}
	defer signal()
	lease, err := locker.Acquire(ctx, key, cfg.pauseTTL, nil)
	if err != nil {
		rep.fail("the paused worker could not take its lease: %v", err)
		return
	}
	rep.issued(key, lease.Token)
	read, err := led.balance(ctx, led.db, paused.account)
	if err != nil {
		rep.fail("the paused worker could not read: %v", err)
		return
	}
	lg.printf("%s: acquired %s with token %d, read balance %d, then PAUSES (lease TTL %v, no renewals)",
		name, key, lease.Token, read, cfg.pauseTTL)
	signal()

	// Stay paused until the lease has expired and another worker has
	// written alice's account with a newer token.
	for {
		t, _ := rep.lastApplied(paused.account)
		if time.Now().After(lease.ValidUntil) && t > lease.Token {
			break
		}
		select {
		case <-ctx.Done():
			rep.fail("the paused worker never saw its lease taken over: %v", ctx.Err())
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	lg.printf("%s: wakes up after its lease expired and writes with its old token %d", name, lease.Token)
	err = led.apply(ctx, paused, lease.Token, name, func(int64) int64 { return read + paused.amount })
	rep.outcome(lg, name, paused, lease.Token, err)
	if errors.Is(err, fence.ErrStaleToken) {
		lg.printf("%s: its job goes back on the queue, to be applied under a fresh lease", name)
		queue <- paused
	}
	_ = locker.Release(context.WithoutCancel(ctx), lease) // fails with ErrNotHeld: the lease is gone
}

type logger struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

func (l *logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "%7.3fs  %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}
