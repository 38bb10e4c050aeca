package guard_test

import (
	"fmt"
	"sync"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
)

// recorder keeps the guard's events as short strings, in order.
type recorder struct {
	clk    *clocktest.Fake
	mu     sync.Mutex
	events []string
	renews int // successful renewals
	fails  int // failed renewals
	last   any // the last event value
}

func (r *recorder) add(s string, ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
	r.last = ev
}

func (r *recorder) observer() *fence.Observer {
	return &fence.Observer{
		AcquireAttempt: func(e fence.AcquireAttemptEvent) {
			r.add(fmt.Sprintf("attempt %d %v", e.Attempt, e.Outcome), e)
		},
		Acquired: func(e fence.AcquiredEvent) {
			r.add(fmt.Sprintf("acquired token=%d attempts=%d latency=%v", e.Lease.Token, e.Attempts, e.Latency), e)
		},
		Renewed: func(e fence.RenewedEvent) {
			r.mu.Lock()
			if e.Err == nil {
				r.renews++
			} else {
				r.fails++
			}
			r.mu.Unlock()
			if e.Err == nil {
				r.add("renewed", e)
			} else {
				r.add("renew failed", e)
			}
		},
		LeaseLost: func(e fence.LeaseLostEvent) {
			r.add("lost", e)
		},
		Released: func(e fence.ReleasedEvent) {
			r.add(fmt.Sprintf("released held=%v err=%v", e.Held, e.Err), e)
		},
	}
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *recorder) counts() (ok, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.renews, r.fails
}
