package torture_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/torture"
)

// job is one run of a test's torture runs: a pair, fenced or control, and
// what the run gave once it ran (res nil and err nil: it did not run).
type job struct {
	pair    torture.Pair
	control bool
	res     *torture.Result
	err     error
}

// jobsOf returns a fenced and a control job for each pair.
func jobsOf(pairs []torture.Pair) []*job {
	var jobs []*job
	for _, p := range pairs {
		for _, control := range []bool{false, true} {
			jobs = append(jobs, &job{pair: p, control: control})
		}
	}
	return jobs
}

// runJobs runs, all at once, each job of jobs that config gives a
// Config (ok true) and whose stores are set, with that Config and the
// job's Control, and keeps what each run gave in its job.
func runJobs(ctx context.Context, jobs []*job, config func(*job) (c torture.Config, ok bool)) {
	var running []*job
	var specs []torture.Spec
	for _, j := range jobs {
		c, ok := config(j)
		if !ok || missing(j.pair) != "" {
			continue
		}
		c.Control = j.control
		running = append(running, j)
		specs = append(specs, torture.Spec{Pair: j.pair, Config: c})
	}
	for i, o := range torture.RunAll(ctx, specs) {
		running[i].res, running[i].err = o.Result, o.Err
	}
}

// logResults logs, under title, the table of the jobs that ran, and
// returns their results.
func logResults(t *testing.T, title string, jobs []*job) []*torture.Result {
	t.Helper()
	var results []*torture.Result
	for _, j := range jobs {
		if j.res != nil {
			results = append(results, j.res)
		}
	}
	var table strings.Builder
	if err := torture.WriteTable(&table, results); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", title, table.String())
	return results
}

// checkJobs checks each job in a subtest named PAIR/fenced or
// PAIR/control: a job whose stores are missing skips (or fails under
// scripts/test.sh), a run that failed or attempted no write (what names
// the workload's writes in the message) fails, and so does a result
// whose Err is not nil.
func checkJobs(t *testing.T, jobs []*job, what string) {
	t.Helper()
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
				t.Fatalf("no %s was attempted", what)
			}
			if err := j.res.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
