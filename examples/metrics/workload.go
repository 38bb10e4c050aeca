package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// accounts are the lock keys and the names written in the ledger.
var accounts = []string{"account/1", "account/2", "account/3"}

// errDuplicate: the ledger's constraint refused an adjustment applied
// before.
var errDuplicate = errors.New("ledger: adjustment already applied")

// ledger keeps balances in a fenced resource and refuses an adjustment id
// seen before, as a unique constraint would.
type ledger struct {
	res *fence.Resource
	tel *fenceotel.Telemetry

	mu      sync.Mutex
	applied map[string]bool
}

// claim records adjustment id, as an insert into a unique index would; it
// reports false when id was applied before.
func (l *ledger) claim(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.applied[id] {
		return false
	}
	l.applied[id] = true
	return true
}

func (l *ledger) unclaim(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.applied, id)
}

// apply adds amount to account with the lease's token, once per id.
func (l *ledger) apply(ctx context.Context, token fence.Token, account, id string, amount int) error {
	if !l.claim(id) {
		l.tel.DuplicateRefused(ctx, "ledger")
		return errDuplicate
	}
	balance := 0
	v, _, err := l.res.Get(ctx, account)
	switch {
	case err == nil:
		if balance, err = strconv.Atoi(string(v)); err != nil {
			l.unclaim(id)
			return &fence.CorruptError{Key: account, Reason: "balance is not a number", Err: err}
		}
	case !errors.Is(err, fence.ErrNotFound):
		l.unclaim(id)
		return err
	}
	if err := l.res.Put(ctx, account, token, []byte(strconv.Itoa(balance+amount))); err != nil {
		l.unclaim(id) // the transaction rolls back
		return err
	}
	return nil
}

// workload runs the workers and the operator until ctx is done.
func workload(ctx context.Context, tel *fenceotel.Telemetry, workers int) error {
	// The locker reports its store calls and the sessions over it, the
	// resource its store calls.
	locker := memory.New(nil)
	locker.SetObserver(tel.Observer())
	res := memres.New(nil)
	res.SetObserver(tel.Observer())
	l := &ledger{res: res, tel: tel, applied: make(map[string]bool)}
	sess, err := fence.NewSession(locker, &fence.SessionOptions{
		TTL: time.Second, BackoffMin: 2 * time.Millisecond, BackoffMax: 20 * time.Millisecond,
	})
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close(context.WithoutCancel(ctx)) }()
	// The operator's victim renews often, so it learns of the break soon.
	victim, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 300 * time.Millisecond})
	if err != nil {
		return err
	}
	defer func() { _ = victim.Close(context.WithoutCancel(ctx)) }()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { worker(ctx, sess, l, w) })
	}
	wg.Go(func() { operator(ctx, victim, locker, l) })
	wg.Wait()
	return nil
}

// worker applies adjustments round the accounts, waiting up to half a
// second for each account's lock; every fifth delivery repeats the
// previous one, as an at-least-once queue does.
func worker(ctx context.Context, sess *fence.Session, l *ledger, w int) {
	var account, id string
	wait := &fence.LockOptions{Wait: 500 * time.Millisecond}
	for n := 0; ctx.Err() == nil; n++ {
		if n%5 != 4 {
			account, id = accounts[(w+n)%len(accounts)], fmt.Sprintf("w%d-%d", w, n)
		}
		_ = guard.Run(ctx, sess, account, func(ctx context.Context, h *fence.Handle) error {
			if !pause(ctx, time.Duration(1+rand.IntN(4))*time.Millisecond) { // the work takes a moment
				return context.Cause(ctx)
			}
			return l.apply(ctx, h.Token(), account, id, 1)
		}, wait)
	}
}

// operator breaks a lock under a long job every half second or so.
// The job, standing for a process paused past its lease, does not
// look at its context; it writes after another worker has, and the
// ledger refuses its stale token. Its session counts the lease as lost.
func operator(ctx context.Context, victim *fence.Session, locker *fence.Locker, l *ledger) {
	for n := 0; pause(ctx, 300*time.Millisecond); n++ {
		account := accounts[0]
		_ = guard.Run(ctx, victim, account, func(_ context.Context, h *fence.Handle) error {
			// A long job: its lease is renewed every 100 ms.
			if !pause(ctx, 250*time.Millisecond) {
				return ctx.Err()
			}
			if err := locker.Break(ctx, account); err != nil {
				return err
			}
			// Paused past the next renewal, which finds the lease
			// gone, and until a newer holder has written.
			if !pause(ctx, 150*time.Millisecond) {
				return ctx.Err()
			}
			for range 400 {
				if top, err := l.res.Highest(ctx, account); err != nil || top > h.Token() || !pause(ctx, 5*time.Millisecond) {
					break
				}
			}
			return l.apply(ctx, h.Token(), account, fmt.Sprintf("late-%d", n), 1)
		}, nil)
	}
}

// pause waits for d and reports whether ctx is still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
