// Command ledger is fence's main demo: several workers apply adjustments to
// accounts under leases, one of them pauses past its lease (as in a long
// garbage-collection pause) and then tries to write, and the ledger's fence
// refuses the stale write. Duplicate adjustments are refused by a unique
// constraint, the second layer. At the end the program checks the ledger's
// invariants and exits non-zero if any fails.
//
// With no flags it needs no setup: an in-memory locker and a SQLite ledger
// in a temporary directory. With -postgres URL (or FENCE_LEDGER_POSTGRES) both
// the locks and the ledger live in that PostgreSQL database.
//
//	go run ./examples/ledger
//	go run ./examples/ledger -postgres postgres://user@localhost/db
//	go run ./examples/ledger -unfenced   # control: no token check; must fail
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	cfg := config{}
	flag.StringVar(&cfg.postgres, "postgres", os.Getenv("FENCE_LEDGER_POSTGRES"),
		"PostgreSQL URL for both locks and ledger (default: in-memory locker and SQLite; env FENCE_LEDGER_POSTGRES)")
	flag.IntVar(&cfg.workers, "workers", 4, "number of workers")
	flag.DurationVar(&cfg.ttl, "ttl", 2*time.Second, "lease TTL of the workers")
	flag.DurationVar(&cfg.pauseTTL, "pause-ttl", 300*time.Millisecond, "lease TTL of the worker that pauses")
	flag.BoolVar(&cfg.unfenced, "unfenced", false, "control run: skip the token check (the invariants must then fail)")
	flag.Parse()
	if cfg.workers < 1 || cfg.ttl <= 0 || cfg.pauseTTL <= 0 {
		fmt.Fprintln(os.Stderr, "ledger: -workers must be at least 1 and the TTLs positive")
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
		os.Exit(1)
	}
	if failed := rep.print(os.Stdout); failed > 0 {
		fmt.Fprintf(os.Stdout, "\n%d invariant(s) FAILED\n", failed)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stdout, "\nall invariants hold")
}
