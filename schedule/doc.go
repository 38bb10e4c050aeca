// Package schedule runs a named job at most once per schedule window
// across replicas, with the semantics of ShedLock's lockAtMostFor and
// lockAtLeastFor, on any fence.Locker, and hands the job the fencing token
// of its run. A Job takes its lock through the application's
// fence.Session, which renews it with every other lease the application
// holds.
//
// Every replica runs the same Job: at the start of each window (a fixed
// interval aligned to the Unix epoch, plus an optional offset) it tries
// once to take the job's lock. The replica that gets it checks that no
// replica has started this window yet, marks the window started, runs the
// job and keeps the lock for at least LockAtLeastFor; the others find the
// lock busy or the window started, and skip it.
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
// The marks accumulate: one record per window in the lock store. Records
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
// window marked: that window does not run again; the next window runs on
// another replica, provided the TTL is shorter than the interval.
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
package schedule
