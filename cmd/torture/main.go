// Command torture is the long run of fence's fault-injection test: it runs
// locker × resource pairs (package torture) with faults for as long as
// asked, each pair fenced and, as a control, without the resource-side
// check, and prints a table of what each run did and what the checker
// found, then the totals. It exits with status 1 when a fenced run shows
// a violation or a lost acknowledged write, when a control run shows
// none, or when a pair could not run.
//
// The pairs run in two waves, one after the other, each for -duration
// (torture.Waves: those reached over TCP through the run's proxies go
// second), the runs of a wave all at once; -waves=false runs them all at
// once, which a 2-core machine is too small for. Each run has 4 workers
// on 4 lease keys by default.
//
// With -transfer (on by default), waves of the transfer workload follow:
// every locker, each with an SQL resource (torture.TransferPairs), its
// workers moving money between accounts under multi-key locks
// (fence.Session.LockAll) with faults; the checker requires the total to
// be kept, no account below zero and every balance to match the
// transfers recorded, in a fenced run, and a control run to break one of
// them. The -keys accounts are at least 3. Their rows say "/transfer" in
// the mode.
//
// It finds the servers through the environment that scripts/services.sh
// exports; `make torture DURATION=10m` starts them and runs it.
//
//	go run ./cmd/torture -duration 10m
//	go run ./cmd/torture -duration 1m -pairs memory/memory,postgres/sql-postgres
//	go run ./cmd/torture -duration 3m -pairs postgres,sqlite -lists=false
//
// Each worker is a process of its own (the command re-executed), which
// the run stops (SIGSTOP) past the TTL and kills (SIGKILL) while it holds
// a lease; -processes=false runs them as goroutines of this process. The
// pairs whose store lives in the process (memory/memory,
// gcs-trusted/memory) run in it either way: their mode says "/procs"
// only when the workers were processes.
//
// With -histories DIR, the operations of each resource whose history
// porcupine finds illegal go into DIR, as text and as porcupine's drawing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	_ "github.com/fencekit/fence/backends" // registers every backend's URL schemes
	"github.com/fencekit/fence/internal/torture"
)

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("torture: ")
	torture.WorkerMain() // when run as a worker process of a run: see -processes
	os.Exit(run(os.Args[1:], os.Stdout))
}

// run parses args, runs the selected pairs and writes the table to out; it
// returns the exit status.
func run(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("torture", flag.ContinueOnError)
	duration := fs.Duration("duration", time.Minute, "how long each run lasts")
	pairs := fs.String("pairs", "", "comma-separated pairs (locker/resource) or lockers to run; empty: all")
	workers := fs.Int("workers", 4, "workers per run")
	keys := fs.Int("keys", 4, "lease keys per run")
	control := fs.Bool("control", true, "also run each pair without fencing, which must show violations")
	strict := fs.Bool("strict", false, "fail on a pair whose servers are not configured, instead of skipping it")
	processes := fs.Bool("processes", true, "run each worker as a process of its own, with SIGSTOP and SIGKILL faults (pairs with an in-process store run in-process)")
	verbose := fs.Bool("v", false, "log each run's progress")
	inWaves := fs.Bool("waves", true, "run the pairs in two waves, one after the other, each for -duration (see torture.Waves); false: all at once")
	lists := fs.Bool("lists", true, "run the read-modify-write workload on lists of entries (false: only -transfer's)")
	transfer := fs.Bool("transfer", true, "also run the transfer workload (money moved between accounts under multi-key locks) on every locker, each with an SQL resource, in waves of its own after the others")
	histories := fs.String("histories", "", "write the operations of each resource whose history porcupine finds illegal into this directory (see torture.WriteHistories)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	selected, transfers, err := selectPairs(*pairs, *transfer)
	if err != nil {
		log.Print(err)
		return 2
	}
	if !*lists {
		selected = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	type job struct {
		pair    torture.Pair
		control bool
		res     *torture.Result
		err     error
	}
	type wave struct {
		pairs    []torture.Pair
		transfer bool
	}
	var waves []wave
	for _, w := range []wave{{selected, false}, {transfers, true}} {
		switch {
		case len(w.pairs) == 0:
		case *inWaves:
			for _, half := range torture.Waves(w.pairs) {
				waves = append(waves, wave{half, w.transfer})
			}
		default:
			waves = append(waves, w)
		}
	}
	var jobs []*job
	for i, wave := range waves {
		var running []*job
		var specs []torture.Spec
		for _, p := range wave.pairs {
			for _, c := range []bool{false, true} {
				if c && !*control {
					continue
				}
				j := &job{pair: p, control: c}
				spec := torture.Spec{Pair: p, Config: torture.Config{Duration: *duration, Workers: *workers, Keys: *keys, Control: c, Processes: *processes, Transfer: wave.transfer}}
				if *verbose {
					spec.Config.Logf = log.Printf
				}
				running, specs = append(running, j), append(specs, spec)
			}
		}
		if ctx.Err() != nil {
			break
		}
		what := "runs"
		if wave.transfer {
			what = "transfer runs"
		}
		log.Printf("wave %d of %d: %d %s of %v at once", i+1, len(waves), len(specs), what, *duration)
		for k, o := range torture.RunAll(ctx, specs) {
			running[k].res, running[k].err = o.Result, o.Err
		}
		jobs = append(jobs, running...)
	}

	status := 0
	var results []*torture.Result
	for _, j := range jobs {
		switch {
		case errors.Is(j.err, torture.ErrUnavailable) && !*strict:
			log.Printf("skipped %s: %v", j.pair.Name(), j.err)
		case j.err != nil:
			log.Printf("%s: %v", j.pair.Name(), j.err)
			status = 1
		default:
			results = append(results, j.res)
		}
	}
	if err := torture.WriteTable(out, results); err != nil {
		log.Print(err)
		return 1
	}
	fmt.Fprintln(out)
	if err := torture.WriteSummary(out, results); err != nil {
		log.Print(err)
		return 1
	}
	for _, r := range results {
		if *histories != "" {
			paths, err := torture.WriteHistories(*histories, r)
			if err != nil {
				log.Print(err)
				status = 1
			}
			for _, p := range paths {
				log.Printf("%s %s: illegal history written to %s", r.Pair, r.Mode(), p)
			}
		}
		if err := r.Err(); err != nil {
			log.Print(err)
			status = 1
		}
	}
	return status
}

// selectPairs returns the pairs named in list (pair names, or locker
// names selecting each pair of that locker) among torture.Pairs, and, when
// transfer is set, among torture.TransferPairs; all of them when list is
// empty. A name must name a pair of at least one of the two.
func selectPairs(list string, transfer bool) (lists, transfers []torture.Pair, err error) {
	all := torture.Pairs()
	var allTransfers []torture.Pair
	if transfer {
		allTransfers = torture.TransferPairs()
	}
	if strings.TrimSpace(list) == "" {
		return all, allTransfers, nil
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		var matched bool
		lists, matched = pick(lists, all, name)
		var inTransfers bool
		transfers, inTransfers = pick(transfers, allTransfers, name)
		if !matched && !inTransfers {
			var names []string
			for _, p := range append(all, allTransfers...) {
				names = append(names, p.Name())
			}
			return nil, nil, fmt.Errorf("no pair %q; pairs: %s", name, strings.Join(names, ", "))
		}
	}
	return lists, transfers, nil
}

// pick adds to out the pairs of all that name names (a pair, or a
// locker), each once, and reports whether it named any.
func pick(out, all []torture.Pair, name string) ([]torture.Pair, bool) {
	matched := false
	for _, p := range all {
		if p.Name() != name && p.Locker.Name != name {
			continue
		}
		matched = true
		if !slices.ContainsFunc(out, func(q torture.Pair) bool { return q.Name() == p.Name() }) {
			out = append(out, p)
		}
	}
	return out, matched
}
