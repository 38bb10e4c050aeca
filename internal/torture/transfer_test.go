package torture_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
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
	type job struct {
		pair    torture.Pair
		control bool
		res     *torture.Result
		err     error
	}
	var jobs, running []*job
	var specs []torture.Spec
	for _, p := range torture.TransferPairs() {
		if !slices.Contains(transferLockers, p.Locker.Name) {
			continue
		}
		for _, control := range []bool{false, true} {
			j := &job{pair: p, control: control}
			jobs = append(jobs, j)
			if missing(p) != "" {
				continue
			}
			running = append(running, j)
			specs = append(specs, torture.Spec{Pair: p, Config: torture.Config{
				Duration: 12 * time.Second, Workers: 3, Control: control, Transfer: true, Processes: true, Logf: t.Logf}})
		}
	}
	for i, o := range torture.RunAll(context.WithoutCancel(t.Context()), specs) {
		running[i].res, running[i].err = o.Result, o.Err
	}
	var results []*torture.Result
	for _, j := range running {
		if j.res != nil {
			results = append(results, j.res)
		}
	}
	var table strings.Builder
	if err := torture.WriteTable(&table, results); err != nil {
		t.Fatal(err)
	}
	t.Logf("transfer run:\n%s", table.String())
	for _, j := range jobs {
		mode := "fenced"
		if j.control {
			mode = "control"
		}
		t.Run(j.pair.Name()+"/"+mode, func(t *testing.T) {
			if env := missing(j.pair); env != "" {
				testenv.Endpoint(t, env, j.pair.Name()) // skips, or fails under scripts/test.sh
			}
			if j.err != nil {
				if errors.Is(j.err, torture.ErrUnavailable) && !testenv.Strict() {
					t.Skip(j.err)
				}
				t.Fatal(j.err)
			}
			if j.res.Writes == 0 {
				t.Fatalf("no transfer was attempted")
			}
			if err := j.res.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
