package mysql

import (
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// BenchmarkSessionRenew holds N handles in one session (TTL 3 s, so a
// renewal round every second) on a pool of 8 connections, and measures
// its keepalive: stmts/interval is the statements sent per renewal
// interval (counted on the wire), cpu-ms/interval this process's CPU time
// per interval, lost the handles lost by the end. Each iteration waits
// one interval; run it with -benchtime 3x.
func BenchmarkSessionRenew(b *testing.B) {
	for _, n := range []int{1, 100, 1000, 10000} {
		b.Run("leases="+strconv.Itoa(n), func(b *testing.B) {
			var stmts statements
			l := newTable(b, stmts.pool(b, 8))
			const ttl = 3 * time.Second
			sess := waittest.NewSession(b, l.Locker, &fence.SessionOptions{TTL: ttl})
			handles := make([]*fence.Handle, n)
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for g := range 8 {
				wg.Go(func() {
					for i := g; i < n; i += 8 {
						h, err := sess.Lock(b.Context(), fmt.Sprint("many-", i), nil)
						if err != nil {
							errs[g] = err
							return
						}
						handles[i] = h
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(2 * ttl / 3) // into step
			before, cpuBefore := stmts.count(), cpuTime(b)
			for b.Loop() {
				time.Sleep(ttl / 3)
			}
			after, cpuAfter := stmts.count(), cpuTime(b)
			lost := 0
			for _, h := range handles {
				if h.Err() != nil {
					lost++
				}
			}
			b.ReportMetric(float64(after-before)/float64(b.N), "stmts/interval")
			b.ReportMetric(float64(cpuAfter-cpuBefore)/float64(b.N)/1e6, "cpu-ms/interval")
			b.ReportMetric(float64(lost), "lost")
		})
	}
}

// cpuTime returns this process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
