package torture_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/torture"
)

// shortDuration is how long a pair runs in the short run: long enough for
// a few pauses past the TTL to be noticed by the other workers, for the
// guaranteed stale write to land and for every private store to be
// restarted at least once while the runs of a wave and their private
// servers share two cores: 40 to 50 seconds in the first wave, whose
// Azure pair (15-second leases) lasts 50 anyway, and 30 in the second.
func shortDuration(p torture.Pair) time.Duration {
	if p.Locker.Wave == 1 {
		return 30 * time.Second
	}
	return min(max(40*time.Second, 8*p.Locker.TTL+4*time.Second), 50*time.Second)
}

// TestShortRun is the short run: every pair of Pairs, fenced and control,
// in two waves (torture.Waves), each wave's runs all at once, for 30 to 50
// seconds each (about two minutes in all, set by the Azure pair's
// 15-second leases in the first wave). Each fenced run must show no violation, no lost
// acknowledged write and a linearizable history; each control run must
// show violations. In the pairs of processPairs each worker is a process
// of its own (the test binary re-executed: see TestMain), stopped and
// killed by the run; their mode says "/procs". It prints the table of
// every run.
func TestShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the short run takes about a minute")
	}
	jobs := jobsOf(torture.Pairs())
	for _, wave := range torture.Waves(torture.Pairs()) {
		runJobs(context.WithoutCancel(t.Context()), jobs, func(j *job) (torture.Config, bool) {
			inWave := slices.ContainsFunc(wave, func(p torture.Pair) bool { return p.Name() == j.pair.Name() })
			return torture.Config{Duration: shortDuration(j.pair), Workers: 3, Processes: processPairs[j.pair.Name()], Logf: t.Logf}, inWave
		})
	}
	results := logResults(t, "short run", jobs)
	if testenv.Strict() {
		checkCoverage(t, results)
	}
	checkJobs(t, jobs, "write")
}

// processPairs are the pairs whose workers run as processes in the short
// run: one whose stores are reached over TCP through the run's proxies,
// one over HTTP, and the SQLite pair, whose processes share one file.
// All of them as processes (66 race-enabled processes
// on two cores) starved the run: most pairs wrote nothing in their 12 s.
var processPairs = map[string]bool{
	"postgres/sql-postgres": true, "dynamo/dynamo": true, "redis/redis": true, "zookeeper/sql-sqlite": true,
	"sqlite/sql-sqlite": true,
}

// storeFaults are the name endings of the disruptions that restart or
// fail over a store (see Result.Disruptions), as opposed to cutting the
// path to it.
var storeFaults = []string{"-restart", "-leader-kill", "-failover"}

// checkCoverage fails t unless the runs, taken together, restarted or
// failed over every kind of private store they had at least once, and
// stopped and killed worker processes.
func checkCoverage(t *testing.T, results []*torture.Result) {
	done := map[string]int{}
	for _, r := range results {
		for name, n := range r.Disruptions {
			for _, suffix := range storeFaults {
				if strings.HasSuffix(name, suffix) {
					done[name] += n
				}
			}
		}
	}
	for name, n := range done {
		if n == 0 {
			t.Errorf("no run's %s disruption ran to its end", name)
		}
	}
	t.Logf("store restarts and failovers: %v", done)
	var stops, kills int
	for _, r := range results {
		stops += r.Faults[torture.FaultSigstop]
		kills += r.Faults[torture.FaultSigkill]
	}
	if stops == 0 || kills == 0 {
		t.Errorf("worker processes stopped %d times and killed %d times; want both above 0", stops, kills)
	}
}

// missing returns the first environment variable the pair needs that is
// unset, or "".
func missing(p torture.Pair) string {
	for _, e := range p.Env() {
		if os.Getenv(e) == "" {
			return e
		}
	}
	return ""
}
