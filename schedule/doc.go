// Package schedule runs a named job at most once per schedule window
// across replicas, with the semantics of ShedLock's lockAtMostFor and
// lockAtLeastFor, on any fence.Locker, and hands the job the fencing token
// of its run. With Options.RetryWithin, a window whose run did not finish
// runs again on another replica instead of being lost. A Job takes its lock through the application's
// fence.Session, which renews it with every other lease the application
// holds.
//
// Every replica runs the same Job: at the start of each window (a fixed
// interval aligned to the Unix epoch, plus an optional offset) it tries
// once to take the job's lock. The replica that gets it checks that no
// replica has started this window yet, marks the window started, runs the
// job and keeps the lock for at least LockAtLeastFor; the others find the
// lock busy or the window started, and skip it. With RetryWithin, a window
// whose run did not finish is run again by another replica (see "Windows
// that are not lost").
//
//	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: time.Minute}) // lockAtMostFor
//	...
//	job, err := schedule.New(sess, "nightly-report", 24*time.Hour,
//		func(ctx context.Context, window time.Time, h *fence.Handle) error {
//			return reports.Put(ctx, "report-"+window.Format(time.DateOnly), h.Token(), build(window))
//		}, &schedule.Options{LockAtLeastFor: 10 * time.Minute})
//	go job.Run(ctx)
//
// # The lock and the window marks
//
// The job's lock is one key, the job's name, for all windows: every run
// gets a token higher than every earlier run's, so a run that overran its
// window, or a stalled replica that wakes up late, is refused by the
// resources the newer run writes (see fence.Resource). Holding the lock is
// not a safety guarantee; the token is.
//
// Each window is marked by a second key, the name, a colon and the
// window's start in UTC RFC 3339 ("nightly-report:2025-03-01T00:00:00Z"):
// the holder of the job's lock acquires and at once releases it before
// running the job. A key that was ever acquired shows a non-zero token in
// Inspect forever after (lockers never delete a key's counter), so a
// replica that takes the job's lock later in the same window, because its
// clock lags or it started late, sees the mark and skips. The check and
// the mark happen under the job's lock, so two replicas cannot both see
// the window unmarked unless one of them lost its lock meanwhile (a pause
// longer than the lease; the session then cancels its work before the
// job starts if it notices, and the token fences its writes if not).
//
// A run that finishes marks its window done the same way, under the job's
// lock, with a third key: the window's mark and ":done"
// ("nightly-report:2025-03-01T00:00:00Z:done"). Only RetryWithin reads it.
//
// The marks accumulate: two records per window in the lock store. Records
// of past windows are never read again by a replica whose clock is
// within an interval of the truth, so an operator may prune those older
// than a few intervals (on lockers/postgres, rows whose key starts with
// the job's name and a colon).
//
// # lockAtMostFor and LockAtLeastFor
//
// ShedLock's lockAtMostFor is the session's TTL
// (fence.SessionOptions.TTL): the longest the lock stays taken after its
// holder dies. While the holder lives, the session renews the lease, so a
// job may run longer than the TTL. A holder that dies mid-job leaves its
// window marked: without RetryWithin that window does not run again; the
// next window runs on another replica, provided the TTL is shorter than
// the interval.
//
// LockAtLeastFor keeps the lock held, by renewing it, until that long
// after the run started, even when the job finished sooner; then it is
// released. Replicas whose clocks lag by less than LockAtLeastFor find the
// lock busy; those lagging more find the window marked. A lock released
// early would work on every locker too, thanks to the mark, but holding it
// keeps lagging replicas from even reading the mark, and matches what
// ShedLock users expect. Renewing rather than letting the lease expire
// makes the hold exact on every locker, whatever its TTL range.
//
// A run that lasts into the next window (or is held into it by
// LockAtLeastFor) makes the replicas skip that window: the lock is busy
// when they try. Keep runs shorter than the interval.
//
// # Windows that are not lost
//
// Without RetryWithin a window runs at most once: a run that does not
// finish (its replica crashed, was stopped by SIGTERM during a rolling
// deploy, or lost its lease) loses its window, and nothing reports it.
// Options.RetryWithin makes another replica (or the same one, restarted)
// run such a window again, within an allowance that starts with the
// window:
//
//	job, err := schedule.New(sess, "nightly-report", 24*time.Hour, build,
//		&schedule.Options{RetryWithin: time.Hour}) // a rerun starts by 01:00 UTC or not at all
//
// A run has finished when the job returns while its context is live (the
// lease held, the ctx given to Run or Attempt not done); it then marks
// the window done before it releases the lock, and no replica runs that
// window again. A job that returns an error has finished too, as ShedLock
// users expect (ShedLock reruns nothing): the error goes to the Observer,
// and a job that should try again does so itself before it returns. A run
// whose context ended has not finished, whatever the job returned.
//
// With RetryWithin, a replica that finds the job's lock busy waits for it
// until the window's allowance ends: the release of the lock wakes it
// where the store notifies (see fence.Session.Lock), and a crashed
// holder's lock is taken over once its lease has expired. Holding the
// lock, it looks at the marks. A window started and not done, within its
// allowance, it runs again (Retried) under the next token of the job's
// lock, higher than the first run's, so that the resources the rerun
// writes refuse the first run's late writes. A window done it leaves
// (Done). Reruns go on, on whichever replica gets the lock, until one
// finishes or the allowance ends: a job that crashes its process every
// time is run again by every replica that comes back, until then.
//
// A window started and not done once its allowance has passed is Missed:
// it will not run. It is reported once, by the replica that finds it so
// under the job's lock (one that takes the lock later in the window, or
// the one that starts the next window, before it runs that window), and
// marked done so that no replica reports it again. A window that no
// replica started (none was running at its start) is not reported: no
// replica can tell it from a job deployed since. Alert on it as on any
// window without a run (see "Alerts and metrics").
//
// The allowance bounds the runs again, not the first: a window that no
// replica started runs when the first replica attempts it, at any time in
// the window, as without RetryWithin.
//
// Choose RetryWithin longer than the session's TTL plus the longest run:
// a replica that crashed holds the lock until its lease expires (on the
// clock-free stores, until a waiter has watched the record unchanged for
// a whole TTL), and a window whose lock is still held when the allowance
// ends is reported missed. A rerun starts before the next window does
// (RetryWithin < interval); like every run, it relies on replicas whose
// clocks agree on the window.
//
// The done mark is a key of the lock store, which every locker keeps for
// ever once acquired: a value published with the lease
// (fence.Locker.Publish) would end with the lease, and so would not
// survive the crash it is meant to outlive.
//
// A job that runs again must be idempotent up to its fenced writes: the
// first run may have written part of its output before it stopped. The
// rerun's token makes every resource it writes refuse the first run from
// then on; writes without a token are not protected.
//
// # Alerts and metrics
//
// Every replica reports every attempt to Options.Observer (AttemptEvent):
// count them by Outcome, and derive the rest:
//
//   - runs: Outcome Ran or Retried; finished runs: those with Finished;
//     job errors: Finished with Err set (alert). A run not Finished was
//     interrupted (stopped, lease lost: errors.Is(Err,
//     fence.ErrLeaseLost)); with RetryWithin the window runs again or is
//     reported missed, so count those rather than alert on them.
//   - retries: Outcome Retried (a replica re-ran a window; alert on a
//     rising rate: replicas are crashing or stopped mid-run).
//   - missed windows: Outcome Missed (alert on every one): the window
//     started, did not finish and will not run. Reported once per window
//     across replicas, so a counter summed over replicas counts windows.
//   - failed attempts: Outcome Failed (alert when repeated): the store
//     could not be reached or answered an error. A replica stopped while
//     it waits for the lock reports one too, with the ctx's error
//     (errors.Is(Err, context.Canceled)): leave those out.
//   - Busy and Done: another replica had the window; every other replica
//     reports one per window.
//   - a window without a run: no event with Finished for a window, across
//     replicas, by the end of the window (a gauge of the last finished
//     Window, compared with the time). That is also the window that no
//     replica started, which none can report.
//
// The lease events of the job's lock (each acquisition, renewal, loss and
// release) go to the observer of the session's Locker.
package schedule
