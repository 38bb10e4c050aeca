package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/guard"
)

// DefaultGrace is how long `fence run` waits after SIGTERM before it sends
// SIGKILL to a command whose lease was lost.
const DefaultGrace = 10 * time.Second

// runFlags are the options of `fence run`.
type runFlags struct {
	ttl, wait, grace time.Duration
	noWait, verbose  bool
	// callTimeout bounds each store call under the lease.
	callTimeout time.Duration
	// clockFree: the store's leases run out by observation
	// (driver.Info.ClockFree).
	clockFree bool
}

// run runs a command under a lease.
func (c *cli) run(ctx context.Context, args []string) int {
	var f runFlags
	cmd := runCommand(&f)
	key, argv, err := cmd.parseRun(c, args, &f)
	if err != nil {
		return c.fail(err)
	}
	locker, err := cmd.open(ctx, c)
	if err != nil {
		return c.fail(err)
	}
	defer c.closeLocker(locker)
	f.clockFree = driver.InfoOf(locker).ClockFree

	sup := newSupervisor(c, argv, f.grace)
	stop := sup.watchSignals()
	defer stop()
	acquireCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sup.cancelAcquire = cancel

	// Each acquisition attempt, renewal and re-read is bounded by the
	// guard's call timeout (TTL/3, at most 5 s), and by --timeout when
	// shorter; the release by --timeout.
	f.callTimeout = min(c.timeout, f.ttl/3, fence.DefaultMaxCallTimeout)
	locker.SetObserver(c.observer(f.verbose))
	sess, err := fence.NewSession(locker, &fence.SessionOptions{
		TTL: f.ttl, CallTimeout: f.callTimeout, ReleaseTimeout: c.timeout,
	})
	if err != nil {
		return c.fail(err)
	}
	err = guard.Run(acquireCtx, sess, key, sup.run, &fence.LockOptions{Wait: f.wait})
	return c.runResult(key, f, sup, err)
}

// parseRun parses the options, KEY and the command.
func (cmd *command) parseRun(c *cli, args []string, f *runFlags) (string, []string, error) {
	rest, err := cmd.parse(c, args)
	if err != nil {
		return "", nil, err
	}
	switch {
	case f.wait < 0:
		return "", nil, usagef("--wait %v is negative", f.wait)
	case f.wait > 0 && f.noWait:
		return "", nil, usagef("--wait and --no-wait exclude each other")
	case f.ttl <= 0:
		return "", nil, usagef("--ttl %v is not positive", f.ttl)
	case f.grace < 0:
		return "", nil, usagef("--grace %v is negative", f.grace)
	case len(rest) == 0:
		return "", nil, usagef("run needs a KEY and a COMMAND: fence run --store URL KEY -- COMMAND [ARGS...]")
	}
	key, rest := rest[0], rest[1:]
	dashes := len(rest) > 0 && rest[0] == "--"
	if dashes {
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		return "", nil, usagef("run needs a COMMAND after KEY %q: fence run --store URL KEY -- COMMAND [ARGS...]", key)
	case !dashes && strings.HasPrefix(rest[0], "-"):
		return "", nil, usagef("%q after KEY: options go before KEY, and -- goes before the command", rest[0])
	}
	return key, rest, nil
}

// runResult reports the outcome of `fence run` and returns its exit
// status.
func (c *cli) runResult(key string, f runFlags, sup *supervisor, err error) int {
	var held *fence.HeldError
	var start *startError
	var exit *exitError
	switch {
	case err == nil:
		return 0
	case sup.interrupted() != 0:
		c.errorf("interrupted by %v before the command started", sup.interrupted())
		return exitSignal + int(sup.interrupted())
	case errors.Is(err, fence.ErrLeaseLost):
		if !sup.lostReported() { // the command had ended: stop did not run
			c.errorf("%s", lostMessage(err))
		}
		if st := sup.status(); st != "" {
			c.errorf("the command %s", st)
		}
		return exitLost
	case errors.As(err, &held):
		msg := fmt.Sprintf("%q is held by another owner", key)
		if held.Token.Valid() {
			msg += fmt.Sprintf(" (token %d)", held.Token)
		}
		if !held.ValidUntil.IsZero() {
			msg += fmt.Sprintf(", not free before %s", held.ValidUntil.UTC().Format(time.RFC3339))
		}
		if f.wait > 0 {
			msg += fmt.Sprintf("; gave up after waiting %v", f.wait)
		}
		c.errorf("%s; the command did not run", msg)
		if f.clockFree && f.wait <= f.ttl {
			c.errorf("hint: this store is clock-free: a lease that is not released ends only for a run that has seen it unchanged for its whole TTL, so a holder that crashed is taken over only by a run that waits longer than its TTL, such as --wait %v (see fence help run)", 2*f.ttl)
		}
		return exitBusy
	case errors.As(err, &start):
		c.errorf("%v", start)
		return start.code
	case errors.As(err, &exit):
		return exit.code // the command's own status, silently
	}
	return c.fail(c.storeErr(nil, err, f.callTimeout))
}

// lostMessage describes a lost lease without owner ids.
func lostMessage(err error) string {
	var lost *fence.LeaseLostError
	if !errors.As(err, &lost) {
		return err.Error()
	}
	msg := fmt.Sprintf("lease on %q (token %d) lost", lost.Key, lost.Token)
	var rec *fence.ReconcileError
	switch {
	case errors.As(lost.Err, &rec) && rec.Found.Held:
		msg += fmt.Sprintf(": the key is now held by another owner with token %d", rec.Found.Token)
	case errors.As(lost.Err, &rec):
		msg += ": the key is free (released or broken)"
	case errors.Is(lost.Err, fence.ErrNotHeld):
		msg += ": the store says it is no longer ours (expired, broken or taken over)"
	case errors.Is(lost.Err, fence.ErrDeadlinePassed):
		msg += ": no renewal succeeded before the lease ran out: " + lost.Err.Error()
	case lost.Err != nil:
		msg += ": " + lost.Err.Error()
	}
	return msg
}
