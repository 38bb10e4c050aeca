package torture_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testenv"
	"github.com/fencekit/fence/torture"
)

// shortDuration is how long a pair runs in the short run: long enough for
// a few pauses past the TTL to be noticed by the other workers, from 6 to
// 50 seconds. Azure's 15-second minimum lease makes its pair the longest.
func shortDuration(p torture.Pair) time.Duration {
	return min(max(6*time.Second, 5*p.Locker.TTL+4*time.Second), 50*time.Second)
}

// TestShortRun is the short run: every pair of Pairs, fenced and control,
// all at once, for a few seconds each (about a minute in all, set by the
// Azure pair). Each fenced run must show no violation, no lost
// acknowledged write and a linearizable history; each control run must
// show violations. It prints the table of every run.
func TestShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the short run takes about a minute")
	}
	type job struct {
		pair    torture.Pair
		control bool
		res     *torture.Result
		err     error
	}
	var jobs []*job
	for _, p := range torture.Pairs() {
		for _, control := range []bool{false, true} {
			jobs = append(jobs, &job{pair: p, control: control})
		}
	}
	// Every run sets up, then all start together: the private servers'
	// start-up (ZooKeeper's JVMs above all) would otherwise eat the CPU of
	// the short runs already going.
	var wg, setUp sync.WaitGroup
	start := make(chan struct{})
	for _, j := range jobs {
		if missing(j.pair) != "" {
			continue
		}
		setUp.Add(1)
		var once sync.Once
		ready := func() { once.Do(setUp.Done) }
		wg.Go(func() {
			defer ready() // a run that fails to set up does not hold the others back
			cfg := torture.Config{Duration: shortDuration(j.pair), Workers: 3, Control: j.control, Logf: t.Logf,
				SetUp: func(ctx context.Context) error {
					ready()
					select {
					case <-start:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}}
			j.res, j.err = torture.Run(context.WithoutCancel(t.Context()), j.pair, cfg)
		})
	}
	setUp.Wait()
	close(start)
	wg.Wait()

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
	t.Logf("short run:\n%s", table.String())

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
				t.Fatalf("no write was attempted")
			}
			if err := j.res.Err(); err != nil {
				t.Error(err)
			}
		})
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
