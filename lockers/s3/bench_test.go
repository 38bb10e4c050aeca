package s3

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/probe/probetest"
	"github.com/fencekit/fence/internal/testing/lockallbench"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// The benchmarks compare the Locker with DynamoDB's (lockers/dynamo) and
// with the floor of a lock on S3: a PutObject of a lock object with
// If-None-Match: * and a DeleteObject, what a Terraform-style lock file
// does, with no token, no expiry and no owner check. They run on the
// emulators, MinIO and dynalite, so the times measure the client, the
// HTTP stack and the emulator, not S3 or DynamoDB; the requests per
// operation, counted on each client's transport, carry over. Every
// contender runs one cycle per iteration in rotating order (see
// sideBySide), so one run gives the ratios; -count 5 gives five. Run them
// with FENCE_S3_ENDPOINT and FENCE_DYNAMO_ENDPOINT set
// (scripts/emulators.sh):
//
//	go test -run '^$' -bench AcquireRelease -benchtime 200x -count 5 ./lockers/s3/
//	go test -run '^$' -bench FailedTry -benchtime 200x -count 5 ./lockers/s3/
//	go test -run '^$' -bench Requests -benchtime 50x ./lockers/s3/
//	go test -run '^$' -bench HandOff -benchtime 200x ./lockers/s3/
//	go test -run '^$' -bench LockAll -benchtime 50x -count 5 ./lockers/s3/

// benchTTL is the lease of the acquisitions measured: long enough that
// none runs out during a benchmark.
const benchTTL = time.Minute

// benchLocker returns an S3 Locker on bucket through client.
func benchLocker(b *testing.B, client *s3.Client, bucket string, opts *Options) *fence.Locker {
	b.Helper()
	l, err := New(client, bucket, opts)
	if err != nil {
		b.Fatalf("New(%q): %v", bucket, err)
	}
	return l
}

// lockerCycle is a contender's cycle of Acquire and Release on
// lockers[i%len(lockers)] of key(i).
func lockerCycle(b *testing.B, key func(int) string, lockers ...*fence.Locker) func(int) error {
	return func(i int) error {
		l := lockers[i%len(lockers)]
		lease, err := l.Acquire(b.Context(), key(i), benchTTL, nil)
		if err != nil {
			return err
		}
		return l.Release(b.Context(), lease)
	}
}

// manyKeys is the number of keys the ManyKeys shape takes in turn.
const manyKeys = 64

// BenchmarkAcquireRelease takes and frees a free key: the S3 Locker
// (clock-free, the default; and trusted-clock), DynamoDB's Locker
// (clock-free) and the floor (put), side by side. The shapes:
//
//   - OneKey: one key, over and over, by one Locker.
//   - ManyKeys: 64 keys in turn, each taken and freed once before the
//     timing starts.
//   - NewKey: a key never used before, every cycle.
//   - TwoLockers: one key, by two Lockers of their own client in turn
//     (two processes taking turns): each finds the record last written
//     by the other.
//
// s3/put is the S3 Locker's time over the floor's, s3/dynamo over
// DynamoDB's; NAME_req is the requests per cycle. In OneKey and ManyKeys
// a second floor, bare, sends the Locker's own requests without the
// Locker: two PutObjects of a record, each on If-Match of the ETag the
// previous one returned (s3/bare).
func BenchmarkAcquireRelease(b *testing.B) {
	shapes := []struct {
		name string
		key  func(i int) string
		warm int // keys 0..warm-1 taken and freed once first
		two  bool
		bare bool
	}{
		{name: "OneKey", key: func(int) string { return "bench" }, warm: 1, bare: true},
		{name: "ManyKeys", key: func(i int) string { return benchKey("many", i, manyKeys) }, warm: manyKeys, bare: true},
		{name: "NewKey", key: func(i int) string { return "new-" + strconv.Itoa(i) }},
		{name: "TwoLockers", key: func(int) string { return "bench" }, warm: 1, two: true},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			sc := newBenchCounter(b)
			client := benchS3Client(b, sc)
			bucket := benchBucket(b, client)
			tc := newBenchCounter(b)
			tclient := benchS3Client(b, tc)
			tbucket := benchBucket(b, tclient)
			dc := newBenchCounter(b)
			fc := newBenchCounter(b)
			fclient := benchS3Client(b, fc)
			fbucket := benchBucket(b, fclient)

			s3Lockers := []*fence.Locker{benchLocker(b, client, bucket, nil)}
			trusted := []*fence.Locker{benchLocker(b, tclient, tbucket, &Options{TrustedClock: true})}
			table := benchTable(b)
			dyn := []*fence.Locker{benchDynamoOn(b, dc, table, nil)}
			if sh.two {
				s3Lockers = append(s3Lockers, benchLocker(b, benchS3Client(b, sc), bucket, nil))
				trusted = append(trusted, benchLocker(b, benchS3Client(b, tc), tbucket, &Options{TrustedClock: true}))
				dyn = append(dyn, benchDynamoOn(b, dc, table, nil))
			}
			cs := []contender{
				{name: "s3", c: sc, cycle: lockerCycle(b, sh.key, s3Lockers...)},
				{name: "dynamo", c: dc, cycle: lockerCycle(b, sh.key, dyn...)},
				{name: "put", c: fc, cycle: func(i int) error {
					if err := floorLock(b.Context(), fclient, fbucket, sh.key(i)); err != nil {
						return err
					}
					return floorUnlock(b.Context(), fclient, fbucket, sh.key(i))
				}},
				{name: "s3trusted", c: tc, cycle: lockerCycle(b, sh.key, trusted...)},
			}
			if sh.bare {
				bc := newBenchCounter(b)
				bclient := benchS3Client(b, bc)
				bbucket := benchBucket(b, bclient)
				etags := map[string]string{}
				cs = append(cs, contender{name: "bare", c: bc, cycle: func(i int) error {
					k := sh.key(i)
					for range 2 {
						etag, err := bareWrite(b.Context(), bclient, bbucket, k, etags[k])
						if err != nil {
							return err
						}
						etags[k] = etag
					}
					return nil
				}})
			}
			for _, c := range cs {
				for i := range sh.warm * max(1, len(s3Lockers)) {
					if err := c.cycle(i); err != nil {
						b.Fatalf("%s, warming up: %v", c.name, err)
					}
				}
			}
			sideBySide(b, cs...)
		})
	}
}

// BenchmarkFailedTry tries to take a key that another Locker (of its own
// client) holds: what a contender pays per try. The floor's try is a
// PutObject with If-None-Match: * answered 412 Precondition Failed. The
// holder is Idle (it does not write between tries, so the record is the
// one the contender saw last) or Renewing (it renews before every try,
// untimed, as a holder renewing every TTL/3 does between tries that far
// apart). The floor's lock object never changes.
func BenchmarkFailedTry(b *testing.B) {
	for _, shape := range []struct {
		name  string
		renew bool
	}{{"Idle", false}, {"Renewing", true}} {
		b.Run(shape.name, func(b *testing.B) {
			const key = "held"
			ctx := b.Context()
			held := func(l *fence.Locker) func(int) error {
				return func(int) error {
					_, err := l.Acquire(ctx, key, benchTTL, nil)
					if errors.Is(err, fence.ErrHeld) {
						return nil
					}
					return fmt.Errorf("Acquire of a held key: %v, want an error matching fence.ErrHeld", err)
				}
			}
			// side returns a contender trying l while holder holds key.
			side := func(name string, c *benchCounter, holder, l *fence.Locker) contender {
				lease, err := holder.Acquire(ctx, key, time.Hour, nil)
				if err != nil {
					b.Fatal(err)
				}
				ct := contender{name: name, c: c, cycle: held(l)}
				if shape.renew {
					ct.prep = func(int) error {
						lease, err = holder.Renew(ctx, lease)
						return err
					}
				}
				return ct
			}
			sc := newBenchCounter(b)
			bucket := benchBucket(b, benchS3Client(b, sc))
			tc := newBenchCounter(b)
			tbucket := benchBucket(b, benchS3Client(b, tc))
			dc := newBenchCounter(b)
			table := benchTable(b)
			fc := newBenchCounter(b)
			fclient := benchS3Client(b, fc)
			fbucket := benchBucket(b, fclient)
			if err := floorLock(ctx, fclient, fbucket, key); err != nil {
				b.Fatal(err)
			}
			trusted := &Options{TrustedClock: true}
			sideBySide(b,
				side("s3", sc,
					benchLocker(b, benchS3Client(b, newBenchCounter(b)), bucket, nil),
					benchLocker(b, benchS3Client(b, sc), bucket, nil)),
				side("dynamo", dc,
					benchDynamoOn(b, newBenchCounter(b), table, nil),
					benchDynamoOn(b, dc, table, nil)),
				contender{name: "put", c: fc, cycle: func(int) error {
					if err := floorLock(ctx, fclient, fbucket, key); !errors.Is(err, errFloorHeld) {
						return fmt.Errorf("PutObject If-None-Match of an existing object: %v, want 412", err)
					}
					return nil
				}},
				side("s3trusted", tc,
					benchLocker(b, benchS3Client(b, newBenchCounter(b)), tbucket, trusted),
					benchLocker(b, benchS3Client(b, tc), tbucket, trusted)),
			)
		})
	}
}

// BenchmarkRequests counts the requests of each operation of the S3
// Locker, in both clock modes, and of DynamoDB's Locker: Acquire of a
// key the same Locker freed last (acquire), of a key another Locker freed
// last (acquire_other), of a key never used (acquire_new), Renew, Release,
// a failed try on a key another Locker holds (failed_try: the Locker
// last saw the key free; failed_try_again: right after a failed try,
// the record unchanged). Times are
// not the point; the per-method breakdown is logged. Run with
// -benchtime 50x.
func BenchmarkRequests(b *testing.B) {
	modes := []struct {
		name string
		new  func(b *testing.B) (a, o *fence.Locker, ac, oc *benchCounter)
	}{
		{"s3-clock-free", func(b *testing.B) (*fence.Locker, *fence.Locker, *benchCounter, *benchCounter) {
			return s3Pair(b, nil)
		}},
		{"s3-trusted-clock", func(b *testing.B) (*fence.Locker, *fence.Locker, *benchCounter, *benchCounter) {
			return s3Pair(b, &Options{TrustedClock: true})
		}},
		{"dynamo-clock-free", func(b *testing.B) (*fence.Locker, *fence.Locker, *benchCounter, *benchCounter) {
			ac, oc := newBenchCounter(b), newBenchCounter(b)
			table := benchTable(b)
			return benchDynamoOn(b, ac, table, nil), benchDynamoOn(b, oc, table, nil), ac, oc
		}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			a, o, ac, oc := m.new(b)
			ctx := b.Context()
			ops := map[string]benchCounts{}
			var order []string
			count := func(name string, c *benchCounter, f func() error) {
				before := c.snapshot()
				if err := f(); err != nil {
					b.Fatalf("%s: %v", name, err)
				}
				d := c.snapshot().since(before)
				if _, ok := ops[name]; !ok {
					ops[name] = benchCounts{}
					order = append(order, name)
				}
				for k, v := range d {
					ops[name][k] += v
				}
			}
			const key = "r"
			// a and then o take and free the key first, so that both
			// have seen it and every acquire of a's below follows a
			// release of o's.
			take := func(l *fence.Locker) (fence.Lease, error) { return l.Acquire(ctx, key, benchTTL, nil) }
			for _, l := range []*fence.Locker{a, o} {
				lease, err := take(l)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx, lease); err != nil {
					b.Fatal(err)
				}
			}
			n := 0
			for i := 0; b.Loop(); i++ {
				var lease fence.Lease
				var err error
				count("acquire_other", ac, func() error { lease, err = take(a); return err })
				count("renew", ac, func() error { lease, err = a.Renew(ctx, lease); return err })
				count("failed_try", oc, func() error {
					if _, err := take(o); !errors.Is(err, fence.ErrHeld) {
						return fmt.Errorf("Acquire of a held key: %v, want an error matching fence.ErrHeld", err)
					}
					return nil
				})
				count("failed_try_again", oc, func() error {
					if _, err := take(o); !errors.Is(err, fence.ErrHeld) {
						return fmt.Errorf("Acquire of a held key: %v, want an error matching fence.ErrHeld", err)
					}
					return nil
				})
				count("release", ac, func() error { return a.Release(ctx, lease) })
				count("acquire", ac, func() error { lease, err = take(a); return err })
				count("release", ac, func() error { return a.Release(ctx, lease) })
				nk := "new-" + strconv.Itoa(i)
				count("acquire_new", ac, func() error { lease, err = a.Acquire(ctx, nk, benchTTL, nil); return err })
				count("release", ac, func() error { return a.Release(ctx, lease) })
				// o takes and frees the key, as another process would.
				if lease, err = take(o); err != nil {
					b.Fatal(err)
				}
				if err := o.Release(ctx, lease); err != nil {
					b.Fatal(err)
				}
				n++
			}
			perOp := map[string]int{"release": 3}
			var lines []string
			for _, name := range order {
				d := n * max(1, perOp[name])
				b.ReportMetric(float64(ops[name].total())/float64(d), name+"_req")
				lines = append(lines, name+": "+ops[name].per(d))
			}
			b.Logf("requests per operation by method, over %d rounds:\n%s", n, strings.Join(lines, "\n"))
		})
	}
}

// s3Pair returns two S3 Lockers with opts on one fresh bucket, each with
// a client of its own whose requests are counted.
func s3Pair(b *testing.B, opts *Options) (a, o *fence.Locker, ac, oc *benchCounter) {
	ac, oc = newBenchCounter(b), newBenchCounter(b)
	ca := benchS3Client(b, ac)
	bucket := benchBucket(b, ca)
	return benchLocker(b, ca, bucket, opts), benchLocker(b, benchS3Client(b, oc), bucket, opts), ac, oc
}

// BenchmarkHandOff measures the hand-off between two clients, on S3 and
// on DynamoDB alternately, both Lockers probing at their default
// interval: a holder on one Locker releases a key for which a
// Session.Lock waits on another Locker of its own client, and the time
// from the return of the release to the return of the waiter's Lock is
// one sample. The holder holds the key for a random 5 to 105 ms after the
// waiter's first busy attempt, so that releases fall at random points of
// the probe cycle (as internal/probe/probetest.HandOff does). It reports
// p50 and p99 of each store, the waiter's requests per hand-off, and the
// ratio s3/dynamo of the medians of each block of 40 hand-offs: its
// median, least and greatest. Run with -benchtime 200x.
func BenchmarkHandOff(b *testing.B) {
	type mode struct {
		name    string
		holders *fence.Session
		waiters *fence.Session
		c       *benchCounter
		busy    chan struct{}
		samples []time.Duration
		reqs    benchCounts
	}
	ttl := &fence.SessionOptions{TTL: time.Minute}
	sc := newBenchCounter(b)
	bucket := benchBucket(b, benchS3Client(b, sc))
	dc := newBenchCounter(b)
	table := benchTable(b)
	dholder := benchDynamoOn(b, newBenchCounter(b), table, nil)
	pairs := []struct {
		name           string
		holder, waiter *fence.Locker
		c              *benchCounter
	}{
		{"s3", benchLocker(b, benchS3Client(b, newBenchCounter(b)), bucket, nil), benchLocker(b, benchS3Client(b, sc), bucket, nil), sc},
		{"dynamo", dholder, benchDynamoOn(b, dc, table, nil), dc},
	}
	var modes []*mode
	for _, p := range pairs {
		m := &mode{name: p.name, c: p.c, busy: make(chan struct{}, 1), reqs: benchCounts{}}
		p.waiter.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
			if e.Outcome == fence.Busy {
				select {
				case m.busy <- struct{}{}:
				default:
				}
			}
		}})
		m.holders = waittest.NewSession(b, p.holder, ttl)
		m.waiters = waittest.NewSession(b, p.waiter, ttl)
		modes = append(modes, m)
	}
	ctx := b.Context()
	const key = "hand-off"
	for b.Loop() {
		for _, m := range modes {
			h, err := m.holders.Lock(ctx, key, &fence.LockOptions{Wait: 30 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			before := m.c.snapshot()
			got := make(chan waittest.Result, 1)
			go func() {
				w, err := m.waiters.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
				got <- waittest.Result{Handle: w, Err: err, At: time.Now()}
			}()
			<-m.busy
			time.Sleep(5*time.Millisecond + rand.N(100*time.Millisecond))
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
			released := time.Now()
			r := <-got
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			m.samples = append(m.samples, r.At.Sub(released))
			for meth, n := range m.c.snapshot().since(before) {
				m.reqs[meth] += n
			}
			if err := r.Handle.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	s, d := modes[0].samples, modes[1].samples
	var ratios []float64
	var blocks []string
	for i := 0; i+probetest.Block <= len(s); i += probetest.Block {
		r := float64(probetest.Percentile(s[i:i+probetest.Block], 50)) / float64(probetest.Percentile(d[i:i+probetest.Block], 50))
		ratios = append(ratios, r)
		blocks = append(blocks, fmt.Sprintf("%.3f", r))
	}
	for _, m := range modes {
		b.ReportMetric(benchMS(probetest.Percentile(m.samples, 50)), m.name+"_p50_ms")
		b.ReportMetric(benchMS(probetest.Percentile(m.samples, 99)), m.name+"_p99_ms")
		b.ReportMetric(float64(m.reqs.total())/float64(len(m.samples)), m.name+"_waiter_req")
		b.Logf("%s waiter's requests per hand-off by method: %s", m.name, m.reqs.per(len(m.samples)))
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "ratio_med")
		b.ReportMetric(ratios[0], "ratio_min")
		b.ReportMetric(ratios[len(ratios)-1], "ratio_max")
		b.Logf("s3/dynamo p50 per block of %d: %s", probetest.Block, strings.Join(blocks, " "))
	}
}

// BenchmarkLockAll compares Session.LockAll of 2 and 8 keys with as many
// Session.Lock calls one after another, each cycle with its release, in
// one bucket, each side on its own Locker and counting client,
// alternating (see lockallbench.Run). S3 has no multi-object operation,
// so LockAll takes the keys one at a time in order: this is the ordered
// path's cost, for reference.
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			bucket := newBucket(b)
			side := func() lockallbench.Side {
				c := newBenchCounter(b)
				l := newLocker(b, bucket, c, nil)
				return lockallbench.Side{Locker: l.Locker, Requests: func() int64 { return int64(c.total()) }}
			}
			lockallbench.Run(b, n, side(), side(), benchTTL)
		})
	}
}

// BenchmarkPublishNotice measures how soon a follower's probe sees a
// Publish (see probetest.PublishNotice):
//
//	go test -run '^$' -bench PublishNotice -benchtime 200x ./lockers/s3/
func BenchmarkPublishNotice(b *testing.B) {
	bucket := newBucket(b)
	holder := newLocker(b, bucket, nil, nil)
	follower := newLocker(b, bucket, nil, nil)
	probetest.PublishNotice(b, holder.Locker, follower.Locker, time.Hour)
}
