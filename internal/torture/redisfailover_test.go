package torture

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestRedisSentinelFailover runs the two Redis pairs behind Sentinel as
// the long run does, for 20 s: without WAIT the lagged failover makes
// the promoted replica issue tokens again, which the fenced run shows as
// expected violations and passes; with WAIT for one replica no token is
// issued twice and the fenced run has no violation. Each run failed its
// primary over at least once.
func TestRedisSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 20 s")
	}
	testenv.RedisServer(t)
	testenv.RedisSentinel(t)
	specs := []Spec{
		{Pair: Pair{RedisSentinelLocker, SQLiteResource}, Config: Config{Duration: 20 * time.Second, Logf: t.Logf}},
		{Pair: Pair{RedisSentinelWaitLocker, SQLiteResource}, Config: Config{Duration: 20 * time.Second, Logf: t.Logf}},
	}
	out := RunAll(context.WithoutCancel(t.Context()), specs)
	for i, o := range out {
		if o.Err != nil {
			t.Fatalf("%s: %v", specs[i].Pair.Name(), o.Err)
		}
		r := o.Result
		t.Logf("%s: %d leases, faults %s, expected %s", r.Pair, r.Leases, FormatCounts(r.Faults), expectedCell(r))
		if r.Faults[FaultFailover] == 0 {
			t.Errorf("%s: no failover in %v", r.Pair, r.Elapsed)
		}
		if err := r.Err(); err != nil {
			t.Errorf("%s: %v", r.Pair, err)
		}
	}
	without, with := out[0].Result, out[1].Result
	reissued := 0
	for _, v := range without.Expected {
		if v.Kind == KindTokenReissued {
			reissued++
		}
	}
	if reissued == 0 {
		t.Errorf("%s: no token reissued after a lagged failover; want the hazard of lockers/redis's \"Failover\"", without.Pair)
	}
	if with.Allowed != nil || len(with.Expected) > 0 || with.Verdict.Count(KindTokenReissued) > 0 {
		t.Errorf("%s: expected %v, violations %v; want no token reissued with WAIT", with.Pair, with.Expected, with.Verdict.Violations)
	}
}

// TestSentinelSetFailover fails the run's private primary over twice and
// checks that each time the replica leads after it, and that the killed
// primary replicates it again, ready for the next failover.
func TestSentinelSetFailover(t *testing.T) {
	set, err := startSentinelSet(t.Context(), testenv.RedisServer(t), testenv.RedisSentinel(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer set.stop()
	for round := range 2 {
		primary, replica, err := set.roles(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		counted := 0
		start := time.Now()
		if err := set.failover(t.Context(), func() { counted++ }); err != nil {
			t.Fatalf("failover %d: %v", round, err)
		}
		t.Logf("failover %d: %s to %s in %v", round, primary.name, replica.name, time.Since(start).Round(time.Millisecond))
		p, r, err := set.roles(t.Context())
		if err != nil || p != replica || r != primary || counted != 1 {
			t.Fatalf("after failover %d: primary %v, replica %v, %v, counted %d; want %s leading %s, counted once", round, p, r, err, counted, replica.name, primary.name)
		}
	}
}
