package etcd

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// BenchmarkRenewRound measures a fence.Session's renewal rounds on etcd
// at 1, 100, 1,000 and 10,000 leases: a session with a TTL of 3 s (a
// round every second) takes the leases with Lock, then holds them for
// renewWindow. Reported per round (counted as the keepalive streams the
// rounds opened): the gRPC requests sent (unary calls and stream
// messages) and the process's CPU time (user and system, all of the
// client's goroutines); and the leases lost during the window (handles
// whose Done closed). Run it with
//
//	go test -run '^$' -bench RenewRound -benchtime 1x -count 3 ./lockers/etcd/
func BenchmarkRenewRound(b *testing.B) {
	const ttl = 3 * time.Second
	const renewWindow = 9 * time.Second
	for _, n := range []int{1, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("leases=%d", n), func(b *testing.B) {
			for b.Loop() {
				var r requests
				l := newTestLocker(b, countingClient(b, &r), nil)
				s := waittest.NewSession(b, l.Locker, &fence.SessionOptions{TTL: ttl})
				hs := lockMany(b, s, n)
				time.Sleep(ttl / 3) // the rounds fall into step
				reqs, rounds, cpu := r.total(), r.streams.Load(), cpuTime()
				time.Sleep(renewWindow)
				reqs, rounds, cpu = r.total()-reqs, r.streams.Load()-rounds, cpuTime()-cpu
				lost := 0
				for _, h := range hs {
					select {
					case <-h.Done():
						lost++
					default:
					}
				}
				b.ReportMetric(float64(reqs)/float64(max(rounds, 1)), "requests/round")
				b.ReportMetric(float64(cpu)/1e6/float64(max(rounds, 1)), "cpu-ms/round")
				b.ReportMetric(float64(rounds), "rounds")
				b.ReportMetric(float64(lost), "lost")
				releaseAll(b, hs)
			}
		})
	}
}

// lockMany takes n keys with s, 16 at a time.
func lockMany(b *testing.B, s *fence.Session, n int) []*fence.Handle {
	b.Helper()
	hs := make([]*fence.Handle, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range min(16, n) {
		wg.Go(func() {
			for i := range next {
				h, err := s.Lock(context.Background(), fmt.Sprint("k", i), nil)
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				hs[i] = h
			}
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
	return hs
}

// releaseAll releases the handles hs, 16 at a time.
func releaseAll(b *testing.B, hs []*fence.Handle) {
	b.Helper()
	var wg sync.WaitGroup
	next := make(chan *fence.Handle, len(hs))
	for _, h := range hs {
		next <- h
	}
	close(next)
	for range min(16, len(hs)) {
		wg.Go(func() {
			for h := range next {
				_ = h.Release(context.Background())
			}
		})
	}
	wg.Wait()
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
