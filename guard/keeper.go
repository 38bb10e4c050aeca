package guard

import (
	"context"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// keeper renews one lease in the background and cancels the work context
// when the lease is lost. It runs on its own goroutine from start to the
// close of done; lost is written before done closes.
type keeper struct {
	s      *settings
	locker fence.Locker
	base   context.Context // for store calls: values of the caller's ctx, never cancelled
	cancel context.CancelCauseFunc

	lease    fence.Lease
	deadline time.Time // send time of the last successful acquire/renew + TTL - margin
	lastErr  error     // last transient renewal error since the last success
	failures int       // transient failures since the last success

	stop chan struct{}
	done chan struct{}
	lost *fence.LeaseLostError
}

// startKeeper starts renewing lease, acquired by a call sent at sent.
func startKeeper(s *settings, locker fence.Locker, base context.Context, lease fence.Lease, sent time.Time, cancel context.CancelCauseFunc) *keeper {
	k := &keeper{
		s: s, locker: locker, base: base, cancel: cancel, lease: lease,
		deadline: sent.Add(lease.TTL - s.safetyMargin),
		stop:     make(chan struct{}), done: make(chan struct{}),
	}
	go k.run()
	return k
}

// halt stops the keeper and waits until it has finished, including any
// store call in flight, so that nothing races with the release. It
// returns the loss, if the keeper saw one.
func (k *keeper) halt() *fence.LeaseLostError {
	close(k.stop)
	<-k.done
	return k.lost
}

func (k *keeper) run() {
	defer close(k.done)
	deadline := k.s.clock.NewTimer(k.deadline.Sub(k.s.clock.Now()))
	defer func() { deadline.Stop() }()
	next := k.s.clock.NewTimer(k.s.renewInterval)
	defer func() { next.Stop() }()
	for {
		if k.stopping() {
			return
		}
		select {
		case <-k.stop:
			return
		case <-deadline.C():
			k.lose(&DeadlineError{Deadline: k.deadline, Err: k.lastErr})
			return
		case <-next.C():
		}
		// Both timers may have fired in one step of the clock: the
		// deadline wins.
		if !k.s.clock.Now().Before(k.deadline) {
			k.lose(&DeadlineError{Deadline: k.deadline, Err: k.lastErr})
			return
		}
		sent := k.s.clock.Now()
		var renewed fence.Lease
		var err error
		if !k.call(deadline, func(ctx context.Context) { renewed, err = k.locker.Renew(ctx, k.lease) }) {
			return
		}
		switch {
		case err == nil && renewed.Token != k.lease.Token:
			err = &fence.CorruptError{Key: k.lease.Key, Reason: "renewal changed the token"}
			k.s.obs.renewed(RenewedEvent{Lease: k.lease, Err: err})
			k.lose(err)
			return
		case err == nil:
			k.lease = renewed
			k.lastErr, k.failures = nil, 0
			k.s.obs.renewed(RenewedEvent{Lease: k.lease})
			k.deadline = sent.Add(k.lease.TTL - k.s.safetyMargin)
			deadline.Stop()
			deadline = k.s.clock.NewTimer(k.deadline.Sub(k.s.clock.Now()))
			next = k.s.clock.NewTimer(k.s.renewInterval)
			continue
		case definitive(err):
			k.s.obs.renewed(RenewedEvent{Lease: k.lease, Err: err})
			k.lose(err)
			return
		}
		// The outcome is unknown: the store may have applied the
		// renewal. Re-read the record instead of guessing.
		k.s.obs.renewed(RenewedEvent{Lease: k.lease, Err: err})
		k.lastErr = err
		if k.stopping() {
			return // the release that follows settles it
		}
		var info fence.LockInfo
		var ierr error
		if !k.call(deadline, func(ctx context.Context) { info, ierr = k.locker.Inspect(ctx, k.lease.Key) }) {
			return
		}
		switch {
		case ierr == nil && !ours(info, k.lease):
			k.lose(&ReconcileError{Lease: k.lease, Found: info, RenewErr: err})
			return
		case ierr != nil && definitive(ierr):
			k.lose(ierr)
			return
		}
		// Still ours, or unknown: retry soon. Only a successful retry
		// moves the deadline, from the retry's own send time.
		k.failures++
		next = k.s.clock.NewTimer(backoff.Policy{First: min(k.s.backoffMin, k.s.renewInterval), Max: min(k.s.backoffMax, k.s.renewInterval)}.Delay(k.failures))
	}
}

// call runs one store call with its own CallTimeout context and waits for
// it to return. If halt is called meanwhile, call waits for the store call
// and reports false. If the safety deadline fires first, call declares the
// lease lost at once (cancelling the work), then still waits for the call
// to return, and reports false. The call is never abandoned: the release
// must not overtake it.
func (k *keeper) call(deadline fence.Timer, f func(ctx context.Context)) bool {
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		ctx, cancel := context.WithTimeout(k.base, k.s.callTimeout)
		defer cancel()
		f(ctx)
	}()
	select {
	case <-returned:
		return true
	case <-k.stop:
		// fn has returned: a loss from now on cannot harm the work.
		<-returned
		return false
	case <-deadline.C():
		k.lose(&DeadlineError{Deadline: k.deadline, Err: k.lastErr, InFlight: true})
		<-returned
		return false
	}
}

// lose records the loss, reports it and cancels the work context.
func (k *keeper) lose(reason error) {
	k.lost = &fence.LeaseLostError{Key: k.lease.Key, Token: k.lease.Token, Err: reason}
	k.s.obs.leaseLost(LeaseLostEvent{Lease: k.lease, Cause: k.lost})
	k.cancel(k.lost)
}

// stopping reports whether halt was called.
func (k *keeper) stopping() bool {
	select {
	case <-k.stop:
		return true
	default:
		return false
	}
}
