// Package coord measures multi-key locks and semaphores
// (fence.Session.LockAll, fence.Session.LockSemaphore) on every store of
// testlockers.Backends, through a Session, so that each store is measured
// the way a program uses it: in one atomic operation where its driver is
// a driver.MultiAcquirer, one key at a time in order elsewhere.
//
// Each benchmark runs its two shapes side by side in one run, alternating
// them iteration by iteration on the same store, and reports their ratio;
// the machine is shared, so only ratios of one run compare. Store calls
// are counted by the Locker's Observer (fence.Observer.Call): one driver
// call, which may be more than one request on the wire.
//
//   - BenchmarkLockAll: LockAll + release of 2 and 8 keys, against as many
//     Session.Lock + release of the same keys (metric lockall/single).
//   - BenchmarkSemaphore: LockSemaphore + release of a free semaphore of 4
//     permits, against Lock + release of one key (metric sem/lock).
//   - BenchmarkSemaphoreFairness: 8 processes (each its own Locker and
//     Session) take a semaphore of 4 permits in a loop for a fixed time,
//     waiting for a permit each time; Jain's index of the permits each got,
//     (Σx)² / (n Σx²): 1 when all got as many, 1/n when one got all.
//   - BenchmarkSemaphoreHandOff: the time from a holder's Release to the
//     return of a waiter in another process, for a slot of a full
//     semaphore of 4 permits and for a plain lock (metric sem/lock of the
//     medians).
//
// The commands, each under about three minutes on the shared 2-core
// machine with the test servers of scripts/test.sh running
// (source /tmp/dev/env.sh or scripts/emulators.sh):
//
//	go test ./internal/testing/coord -run '^$' -bench 'LockAll$' -benchtime 10x -count 5
//	go test ./internal/testing/coord -run '^$' -bench 'Semaphore$' -benchtime 20x -count 5
//	go test ./internal/testing/coord -run '^$' -bench 'Fairness' -benchtime 1x
//	go test ./internal/testing/coord -run '^$' -bench 'HandOff' -benchtime 20x
//
// The fairness benchmark runs 8 s per store for each of its iterations
// (the default -benchtime makes one). Nothing here runs without -bench.
package coord
