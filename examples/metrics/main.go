// Command metrics serves fence's OpenTelemetry metrics on a Prometheus
// endpoint while a small ledger-like workload runs: workers adjust account
// balances under leases (guard.Run over one session of an in-memory
// locker), writing to an in-memory fenced store; redelivered adjustments
// are refused as duplicates; and now and then an operator breaks a lock
// under a worker, whose late write the store refuses as stale. The
// locker and the store each have fenceotel's observer.
//
//	go run ./examples/metrics                     # http://127.0.0.1:9464/metrics
//	go run ./examples/metrics -addr :0 -duration 1m
//	curl -s http://127.0.0.1:9464/metrics | grep ^fence_
//
// The metric names are listed in package fenceotel. The Prometheus
// exporter writes them with underscores and unit suffixes:
// fence_lock_acquire_attempts_total{fence_outcome="busy"},
// fence_lock_hold_duration_seconds, fence_resource_writes_total{fence_outcome="stale"}.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	cfg := config{}
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:9464", "address of the metrics endpoint (host:0 picks a free port)")
	flag.DurationVar(&cfg.duration, "duration", 0, "how long to run the workload; 0 runs until interrupted")
	flag.IntVar(&cfg.workers, "workers", 4, "number of workers")
	flag.Parse()
	if cfg.workers < 1 || cfg.duration < 0 {
		fmt.Fprintln(os.Stderr, "metrics: -workers must be at least 1 and -duration not negative")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, cfg, func(addr string) {
		fmt.Printf("serving metrics on http://%s/metrics\n", addr)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	addr     string
	duration time.Duration
	workers  int
	// idle, when set, is called after the workload has stopped and
	// before the endpoint closes: tests scrape the final values then.
	idle func()
}
