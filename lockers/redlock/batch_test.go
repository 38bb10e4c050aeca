package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
)

// requests counts what a client sends: each command, and each pipeline
// as one, except a new connection's set-up (HELLO, CLIENT SETINFO).
type requests struct{ n atomic.Int64 }

func (r *requests) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (r *requests) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() != "hello" {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *requests) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if slices.ContainsFunc(cmds, func(c goredis.Cmder) bool { return c.Name() != "client" }) {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// counted adds a requests hook to each master's client.
func counted(ms []*master) []*requests {
	rs := make([]*requests, len(ms))
	for i, m := range ms {
		rs[i] = new(requests)
		m.client.AddHook(rs[i])
	}
	return rs
}

// TestRenewBatch: with one master of three down, RenewBatch renews the
// leases a quorum holds and answers fence.ErrNotHeld for one released,
// each master that answers getting one request (the scripts flushed on
// one of them first: its leases go again with EVAL, a second request).
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	l, d := newStoreLocker(t, ms, nil)
	ctx := t.Context()
	var leases []fence.Lease
	for i := range 4 {
		lease, err := l.Acquire(ctx, fmt.Sprint("k", i), time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	if err := l.Release(ctx, leases[1]); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Renew(ctx, leases[0]); err != nil { // the renew script cached
		t.Fatal(err)
	}
	must(ms[1].client.ScriptFlush(ctx).Err())
	rs := counted(ms)
	ms[2].kill()
	errs := d.RenewBatch(ctx, leases)
	for i, err := range errs {
		if i == 1 {
			if !errors.Is(err, fence.ErrNotHeld) {
				t.Errorf("released lease: %v; want ErrNotHeld", err)
			}
		} else if err != nil {
			t.Errorf("lease %d: %v", i, err)
		}
	}
	for i, want := range []int64{1, 2, 1} {
		if got := rs[i].n.Load(); got != want {
			t.Errorf("master %d: %d requests; want %d", i, got, want)
		}
	}
}

// TestSessionRenewalRequests: a Session's renewal round over this
// locker sends one request to each master, for 1, 100 and 1,000 handles
// alike.
func TestSessionRenewalRequests(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	for _, m := range ms { // the renew script cached: one request a round from the first
		if err := renewScript.Load(t.Context(), m.client).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rs := counted(ms)
	for _, n := range []int{1, 100, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := t.Context()
			clock := clocktest.New(time.Now())
			l := newLocker(t, ms, &Options{Prefix: fmt.Sprintf("renewals%d:", n), Clock: clock})
			var renewed, failed atomic.Int64
			l.SetObserver(&fence.Observer{Renewed: func(e fence.RenewedEvent) {
				if e.Err != nil {
					failed.Add(1)
				}
				renewed.Add(1)
			}})
			const ttl = time.Minute
			s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			for i := range n {
				if _, err := s.Lock(ctx, fmt.Sprint("k", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			for round := int64(1); round <= 3; round++ {
				if err := clock.WaitTimers(ctx, 2); err != nil {
					t.Fatal(err)
				}
				before := make([]int64, len(rs))
				for i, r := range rs {
					before[i] = r.n.Load()
				}
				clock.Advance(ttl / 3)
				for renewed.Load() < round*int64(n) {
					if ctx.Err() != nil {
						t.Fatal(ctx.Err())
					}
					time.Sleep(time.Millisecond)
				}
				for i, r := range rs {
					if got := r.n.Load() - before[i]; got != 1 {
						t.Errorf("round %d of %d handles: master %d got %d requests; want 1", round, n, i, got)
					}
				}
			}
			if f := failed.Load(); f != 0 {
				t.Errorf("%d renewals failed", f)
			}
		})
	}
}
