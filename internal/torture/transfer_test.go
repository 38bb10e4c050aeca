package torture_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/torture"
)

// transferLockers are the lockers of the transfer workload's short run:
// one in the run's process (its workers goroutines), one on a shared
// file, one over TCP through the run's proxy with store restarts, and a
// clock-free one over HTTP; the long run (cmd/torture) runs them all.
var transferLockers = []string{"memory", "sqlite", "postgres", "dynamo"}

// TestTransferShortRun runs the transfer workload (torture.Config.Transfer)
// on a few lockers, fenced and control, all at once for 12 seconds, the
// workers as processes where the stores allow: a fenced run must keep the
// total, every account at zero or more and every balance as its recorded
// transfers make it; a control run must break one of them.
func TestTransferShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the transfer run takes about 15 seconds")
	}
	var pairs []torture.Pair
	for _, p := range torture.TransferPairs() {
		if slices.Contains(transferLockers, p.Locker.Name) {
			pairs = append(pairs, p)
		}
	}
	jobs := jobsOf(pairs)
	runJobs(context.WithoutCancel(t.Context()), jobs, func(*job) (torture.Config, bool) {
		return torture.Config{Duration: 12 * time.Second, Workers: 3, Transfer: true, Processes: true, Logf: t.Logf}, true
	})
	logResults(t, "transfer run", jobs)
	checkJobs(t, jobs, "transfer")
}
