package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// The benchmarks compare fence's locker with the client libraries' own
// zk.Lock (github.com/z-division/go-zookeeper, the fork this package
// uses, and github.com/go-zookeeper/zk) and with ZooKeeper's floor on the
// same server, side by side in one loop: each iteration runs one cycle of
// each, in rotating order, timing each, so that the machine's drift moves
// all alike. The ratios are medians over the iterations of fence's time
// over the other's. Run them with
//
//	go test -run '^$' -bench 'AcquireRelease|SessionLockRelease|Handoff' -benchtime 200x -count 5 ./lockers/zookeeper/
//	go test -run '^$' -bench RenewRound -benchtime 20x -count 5 ./lockers/zookeeper/

// contender is one side of a side-by-side benchmark: run times its
// cycle number i.
type contender struct {
	name string
	run  func(i int) time.Duration
}

// timed is a contender that runs f and is timed from outside.
func timed(name string, f func(i int)) contender {
	return contender{name, func(i int) time.Duration {
		start := time.Now()
		f(i)
		return time.Since(start)
	}}
}

// interleaved runs each contender once per iteration, the first to run
// rotating, and reports the medians and 99th percentiles of each one's
// times and the median ratio of the first's time over each other's.
func interleaved(b *testing.B, cs ...contender) {
	b.Helper()
	times := make([][]float64, len(cs))
	ratios := make([][]float64, len(cs))
	for i := 0; b.Loop(); i++ {
		got := make([]float64, len(cs))
		for j := range cs {
			k := (i + j) % len(cs)
			got[k] = float64(cs[k].run(i))
		}
		for k := range cs {
			times[k] = append(times[k], got[k])
			ratios[k] = append(ratios[k], got[0]/got[k])
		}
	}
	pct := func(v []float64, p float64) float64 {
		slices.Sort(v)
		i := int(math.Ceil(p/100*float64(len(v)))) - 1
		return v[min(max(i, 0), len(v)-1)]
	}
	for k, c := range cs {
		b.ReportMetric(pct(times[k], 50)/1e6, c.name+"_p50_ms")
		b.ReportMetric(pct(times[k], 99)/1e6, c.name+"_p99_ms")
		if k > 0 {
			b.ReportMetric(pct(ratios[k], 50), cs[0].name+"/"+c.name)
		}
	}
}

// paired is interleaved for two functions timed from outside.
func paired(b *testing.B, aName, zName string, a, z func(i int)) {
	b.Helper()
	interleaved(b, timed(aName, a), timed(zName, z))
}

// connectGoZK opens a session of github.com/go-zookeeper/zk with servers
// and waits for it; the connection is closed when the test ends.
func connectGoZK(t testing.TB, servers string) *gozk.Conn {
	t.Helper()
	c, events, err := gozk.Connect(strings.Split(servers, ","), testSessionTimeout, gozk.WithLogger(silent{}), gozk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("connect to ZooKeeper at %s: %v", servers, err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == gozk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return c
			}
		case <-deadline:
			t.Fatalf("no ZooKeeper session with %s after 20 s", servers)
		}
	}
}

// BenchmarkAcquireRelease takes and frees a free key, one session each
// side: fence's Acquire and Release (a free key it saw before: one
// multi-operation that checks the key free, creates the lock node and
// writes the last record; the delete: two writes, two round trips)
// against zk.Lock's Lock and Unlock in both client libraries (a protected
// create; the children; the delete: two writes, three round trips), and
// against two floors: a bare create of an ephemeral sequential node and
// its delete (the two writes any lock on ZooKeeper makes), and fence's
// own requests sent bare.
func BenchmarkAcquireRelease(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("bench")
	cleanupTree(b, servers, root)
	l := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	zc := connect(b, servers, testSessionTimeout)
	gc := connectGoZK(b, servers)
	fc := connect(b, servers, testSessionTimeout)
	ctx := b.Context()
	const keys = 16 // a few keys, so that each is free when taken
	acl := zk.WorldACL(zk.PermAll)
	for k := range keys {
		// The floors' paths and records exist, as fence's do after the
		// first round.
		if err := l.d.makePath(root + "/.last"); err != nil {
			b.Fatal(err)
		}
		for _, p := range []string{root + "/floor" + strconv.Itoa(k), root + "/multi" + strconv.Itoa(k), root + "/.last/multi" + strconv.Itoa(k)} {
			if _, err := fc.Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				b.Fatal(err)
			}
		}
	}
	cs := []contender{
		timed("fence", func(i int) {
			lease, err := l.Acquire(ctx, "f"+strconv.Itoa(i%keys), time.Second, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}),
		timed("zklock", func(i int) {
			m := zk.NewLock(zc, root+"/zk"+strconv.Itoa(i%keys), acl)
			if err := m.Lock(); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(); err != nil {
				b.Fatal(err)
			}
		}),
		timed("gozklock", func(i int) {
			m := gozk.NewLock(gc, root+"/gozk"+strconv.Itoa(i%keys), gozk.WorldACL(gozk.PermAll))
			if err := m.Lock(); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(); err != nil {
				b.Fatal(err)
			}
		}),
		timed("createdelete", func(i int) {
			p, err := fc.Create(root+"/floor"+strconv.Itoa(i%keys)+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				b.Fatal(err)
			}
			if err := fc.Delete(p, -1); err != nil {
				b.Fatal(err)
			}
		}),
		timed("multidelete", func(i int) {
			parent := root + "/multi" + strconv.Itoa(i%keys)
			res, err := fc.Multi(
				&zk.DeleteRequest{Path: parent, Version: -1},
				&zk.CreateRequest{Path: parent, Acl: acl},
				&zk.CreateRequest{Path: parent + "/n-", Acl: acl, Flags: zk.FlagEphemeral | zk.FlagSequence},
				&zk.SetDataRequest{Path: root + "/.last/multi" + strconv.Itoa(i%keys), Data: []byte("x"), Version: -1},
			)
			if err != nil {
				b.Fatal(err)
			}
			if err := fc.Delete(res[2].String, -1); err != nil {
				b.Fatal(err)
			}
		}),
	}
	// A first round on every key makes the paths and records that stay.
	for _, c := range cs {
		for k := range keys {
			c.run(k)
		}
	}
	interleaved(b, cs...)
}

// BenchmarkAcquireReleaseInTurn is BenchmarkAcquireRelease with two
// processes taking each key in turn, each on its own session: one cycle is
// an acquire+release by each. A Locker then finds the key taken by the
// other since it last took it.
func BenchmarkAcquireReleaseInTurn(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("bench")
	cleanupTree(b, servers, root)
	ls := []testLocker{
		newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root}),
		newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root}),
	}
	zcs := []*zk.Conn{connect(b, servers, testSessionTimeout), connect(b, servers, testSessionTimeout)}
	ctx := b.Context()
	const keys = 16
	acl := zk.WorldACL(zk.PermAll)
	cs := []contender{
		timed("fence", func(i int) {
			for _, l := range ls {
				lease, err := l.Acquire(ctx, "f"+strconv.Itoa(i%keys), time.Second, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx, lease); err != nil {
					b.Fatal(err)
				}
			}
		}),
		timed("zklock", func(i int) {
			for _, zc := range zcs {
				m := zk.NewLock(zc, root+"/zk"+strconv.Itoa(i%keys), acl)
				if err := m.Lock(); err != nil {
					b.Fatal(err)
				}
				if err := m.Unlock(); err != nil {
					b.Fatal(err)
				}
			}
		}),
	}
	for _, c := range cs {
		for k := range keys {
			c.run(k)
		}
	}
	interleaved(b, cs...)
}

// BenchmarkSessionLockRelease is the same through a fence.Session (TryLock
// and Release of a handle the session would keep renewed) against
// zk.Lock, which has no lease to renew.
func BenchmarkSessionLockRelease(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("bench")
	cleanupTree(b, servers, root)
	l := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(b.Context()) })
	zc := connect(b, servers, testSessionTimeout)
	ctx := b.Context()
	const keys = 16
	paired(b, "fence", "zklock",
		func(i int) {
			h, err := s.Lock(ctx, "f"+strconv.Itoa(i%keys), nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		},
		func(i int) {
			m := zk.NewLock(zc, root+"/zk"+strconv.Itoa(i%keys), zk.WorldACL(zk.PermAll))
			if err := m.Lock(); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(); err != nil {
				b.Fatal(err)
			}
		})
}

// BenchmarkHandoff times a hand-off, from a holder's release to the
// return of a waiter blocked in line for the key, each waiter with a
// session of its own: fence's Session.Lock (woken by the watch of the
// holder's node, then one Acquire, a single write for a key whose last
// record it read while waiting) against zk.Lock's Lock in both client
// libraries (its node queued before the wait, woken by the watch of its
// predecessor, then a listing of the children), and against fence's
// requests sent bare (the floor: the holder's node deleted, the waiter
// woken by its watch sends the multi-operation of a free key). The
// release comes once the waiter is in its wait (after fence's waiter
// found the key busy, when zk.Lock's waiter's node is queued, when the
// floor's watch is set), and 5 ms more.
func BenchmarkHandoff(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("handoff")
	cleanupTree(b, servers, root)
	holder := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	waiter := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	busy := make(chan string, 16)
	waiter.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
		if e.Outcome == fence.Busy {
			busy <- e.Key
		}
	}})
	hs, err := fence.NewSession(holder.Locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ws, err := fence.NewSession(waiter.Locker, &fence.SessionOptions{TTL: 5 * time.Second, PollInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = hs.Close(context.Background()); _ = ws.Close(context.Background()) })
	zh, zw := connect(b, servers, testSessionTimeout), connect(b, servers, testSessionTimeout)
	gh, gw := connectGoZK(b, servers), connectGoZK(b, servers)
	ctx := b.Context()
	if err := holder.d.makePath(root + "/.last"); err != nil {
		b.Fatal(err)
	}
	const settle = 5 * time.Millisecond
	// queued waits until path has two children: the holder's and the
	// waiter's.
	queued := func(path string) {
		for {
			children, _, err := zh.Children(path)
			if err != nil {
				b.Fatal(err)
			}
			if len(children) >= 2 {
				time.Sleep(settle)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	interleaved(b,
		contender{"fence", func(i int) time.Duration {
			key := "f" + strconv.Itoa(i)
			h, err := hs.Lock(ctx, key, nil)
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			go func() {
				w, err := ws.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
				at := time.Now()
				if err != nil {
					b.Error(err)
				} else {
					_ = w.Release(ctx)
				}
				got <- at
			}()
			for k := <-busy; k != key; k = <-busy {
			}
			time.Sleep(settle)
			start := time.Now()
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
			return (<-got).Sub(start)
		}},
		contender{"zklock", func(i int) time.Duration {
			path := root + "/zk" + strconv.Itoa(i)
			h := zk.NewLock(zh, path, zk.WorldACL(zk.PermAll))
			if err := h.Lock(); err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			go func() {
				w := zk.NewLock(zw, path, zk.WorldACL(zk.PermAll))
				err := w.Lock()
				at := time.Now()
				if err != nil {
					b.Error(err)
				} else {
					_ = w.Unlock()
				}
				got <- at
			}()
			queued(path)
			start := time.Now()
			if err := h.Unlock(); err != nil {
				b.Fatal(err)
			}
			return (<-got).Sub(start)
		}},
		contender{"floor", func(i int) time.Duration {
			// fence's requests, bare: the holder's node deleted, the
			// waiter woken by its watch sends the multi of a free key.
			parent := root + "/floor" + strconv.Itoa(i)
			last := root + "/.last/floor" + strconv.Itoa(i)
			acl := zk.WorldACL(zk.PermAll)
			for _, p := range []string{parent, last} {
				if _, err := zh.Create(p, nil, 0, acl); err != nil {
					b.Fatal(err)
				}
			}
			node, err := zh.Create(parent+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			ready := make(chan struct{})
			go func() {
				_, _, ev, err := zw.ExistsW(node)
				if err != nil {
					b.Error(err)
				}
				close(ready)
				<-ev
				res, err := zw.Multi(
					&zk.DeleteRequest{Path: parent, Version: -1},
					&zk.CreateRequest{Path: parent, Acl: acl},
					&zk.CreateRequest{Path: parent + "/n-", Acl: acl, Flags: zk.FlagEphemeral | zk.FlagSequence},
					&zk.SetDataRequest{Path: last, Data: []byte("x"), Version: -1},
				)
				at := time.Now()
				if err != nil {
					b.Error(err)
				} else {
					_ = zw.Delete(res[2].String, -1)
				}
				got <- at
			}()
			<-ready
			time.Sleep(settle)
			start := time.Now()
			if err := zh.Delete(node, -1); err != nil {
				b.Fatal(err)
			}
			return (<-got).Sub(start)
		}},
		contender{"gozklock", func(i int) time.Duration {
			path := root + "/gozk" + strconv.Itoa(i)
			h := gozk.NewLock(gh, path, gozk.WorldACL(gozk.PermAll))
			if err := h.Lock(); err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			go func() {
				w := gozk.NewLock(gw, path, gozk.WorldACL(gozk.PermAll))
				err := w.Lock()
				at := time.Now()
				if err != nil {
					b.Error(err)
				} else {
					_ = w.Unlock()
				}
				got <- at
			}()
			queued(path)
			start := time.Now()
			if err := h.Unlock(); err != nil {
				b.Fatal(err)
			}
			return (<-got).Sub(start)
		}},
	)
}

// BenchmarkRenewRound times one renewal round of a locker holding n
// leases on one connection, in turn: RenewBatch, what a Session's
// keepalive calls (below 32 leases one sync and the reads of every
// lease's node sent together, from 32 on one multi-operation of checks
// per 1,000 leases); the sync and reads at any number (reads_); up to
// 1,000 leases, one Renew per lease as a keepalive without RenewBatch
// would (each_); and the bare multi-operations of checks (multicheck_,
// the floor). It reports the requests the client sent per
// round, the wall time of a round, the client's CPU time per lease, and
// the leases a round did not renew (zero unless a lease ran out).
func BenchmarkRenewRound(b *testing.B) {
	for _, n := range []int{1, 100, 1000, 10000} {
		b.Run("leases="+strconv.Itoa(n), func(b *testing.B) {
			var sent atomic.Int64
			dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
				c, err := net.DialTimeout(network, address, timeout)
				if err != nil {
					return nil, err
				}
				return countingConn{c, &sent}, nil
			}
			const session = 60 * time.Second // the shared server grants it
			c, events, err := zk.Connect([]string{sharedServers(b)}, session, zk.WithLogger(silent{}), zk.WithLogInfo(false), zk.WithDialer(dial))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Close)
			for ev := range events {
				if ev.State == zk.StateHasSession {
					go drain(events)
					break
				}
			}
			root := uniqueRoot("renew")
			b.Cleanup(func() { deleteTree(c, root) })
			l := newTestLocker(b, c, &Options{Root: root, SessionTimeout: session})
			ctx := b.Context()
			leases := make([]fence.Lease, n)
			var wg sync.WaitGroup
			slots := make(chan struct{}, 64)
			for i := range leases {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					lease, err := l.Acquire(ctx, "k"+strconv.Itoa(i), 30*time.Second, nil)
					if err != nil {
						b.Error(err)
					}
					leases[i] = lease
				})
			}
			wg.Wait()
			if b.Failed() {
				return
			}
			paths := make([]string, n)
			for i, lease := range leases {
				h, err := l.d.lookup(lease)
				if err != nil {
					b.Fatal(err)
				}
				paths[i] = h.path
				h.mu.Unlock()
			}
			// The modes of a round, each returning the leases not renewed.
			modes := []struct {
				name string
				run  func() int
			}{
				{"batch", func() int { // RenewBatch, as a Session's keepalive
					lost := 0
					for _, err := range l.d.RenewBatch(ctx, leases) {
						if err != nil {
							lost++
						}
					}
					return lost
				}},
				{"reads", func() int { // one sync, the reads of every node sent together
					errs := make([]error, n)
					todo := make([]int, n)
					for i := range todo {
						todo[i] = i
					}
					l.d.renewByReads(leases, todo, paths, errs)
					lost := 0
					for _, err := range errs {
						if err != nil {
							lost++
						}
					}
					return lost
				}},
				{"each", func() int { // one Renew per lease
					lost := 0
					for _, lease := range leases {
						if _, err := l.Renew(ctx, lease); err != nil {
							lost++
						}
					}
					return lost
				}},
				{"multicheck", func() int { // a floor: one multi of checks per 1,000 nodes, a write
					var lost atomic.Int64
					var wg sync.WaitGroup
					for lo := 0; lo < n; lo += 1000 {
						wg.Go(func() {
							var ops []any
							for _, p := range paths[lo:min(lo+1000, n)] {
								ops = append(ops, &zk.CheckVersionRequest{Path: p, Version: -1})
							}
							if _, err := c.Multi(ops...); err != nil {
								lost.Add(int64(len(ops)))
							}
						})
					}
					wg.Wait()
					return int(lost.Load())
				}},
			}
			type total struct {
				rounds, lost, reqs int
				wall, cpu          time.Duration
			}
			totals := make([]total, len(modes))
			for i := 0; b.Loop(); i++ {
				for k, m := range modes {
					if m.name == "each" && (n > 1000 || i >= 3) {
						continue
					}
					before, cpu0, start := sent.Load(), cpuTime(), time.Now()
					x := m.run()
					t := &totals[k]
					t.wall += time.Since(start)
					t.cpu += cpuTime() - cpu0
					t.reqs += int(sent.Load() - before)
					t.lost += x
					t.rounds++
				}
			}
			for k, m := range modes {
				t := totals[k]
				if t.rounds == 0 {
					continue
				}
				prefix := m.name + "_"
				if m.name == "batch" {
					prefix = ""
				}
				r := float64(t.rounds)
				b.ReportMetric(float64(t.reqs)/r, prefix+"requests/round")
				b.ReportMetric(float64(t.wall.Microseconds())/1e3/r, prefix+"ms/round")
				b.ReportMetric(float64(t.cpu.Microseconds())/r/float64(n), prefix+"cpu_us/lease")
				b.ReportMetric(float64(t.lost)/r, prefix+"lost/round")
			}
		})
	}
}

// countingConn counts the writes to a connection: one per request the
// ZooKeeper client sends (and one per ping).
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkSessionHold takes n keys in one fence.Session (Lock without
// waiting, 64 at a time on one connection), holds them for three TTLs
// after and reports how many handles were lost (lost), how many Locks
// failed (failed_locks: a call that ran out of its TTL/3 bound), and the
// requests the client sent per second while holding (requests/s,
// renewals and the client's pings). Run it with
//
//	go test -run '^$' -bench SessionHold -benchtime 1x ./lockers/zookeeper/
func BenchmarkSessionHold(b *testing.B) {
	for _, ttl := range []time.Duration{MinTTL, 2 * time.Second, 5 * time.Second} {
		for _, n := range []int{1, 100, 1000, 10000} {
			b.Run(fmt.Sprintf("ttl=%v/leases=%d", ttl, n), func(b *testing.B) {
				var sent atomic.Int64
				dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
					c, err := net.DialTimeout(network, address, timeout)
					if err != nil {
						return nil, err
					}
					return countingConn{c, &sent}, nil
				}
				c, events, err := zk.Connect([]string{sharedServers(b)}, testSessionTimeout, zk.WithLogger(silent{}), zk.WithLogInfo(false), zk.WithDialer(dial))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(c.Close)
				for ev := range events {
					if ev.State == zk.StateHasSession {
						go drain(events)
						break
					}
				}
				root := uniqueRoot("hold")
				b.Cleanup(func() { deleteTree(c, root) })
				l := newTestLocker(b, c, &Options{Root: root})
				for b.Loop() {
					s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: ttl})
					if err != nil {
						b.Fatal(err)
					}
					handles := make([]*fence.Handle, n)
					var failed atomic.Int64
					var wg sync.WaitGroup
					slots := make(chan struct{}, 64)
					for i := range handles {
						slots <- struct{}{}
						wg.Go(func() {
							defer func() { <-slots }()
							h, err := s.Lock(b.Context(), "k"+strconv.Itoa(i), nil)
							if err != nil {
								failed.Add(1)
								return
							}
							handles[i] = h
						})
					}
					wg.Wait()
					before, start := sent.Load(), time.Now()
					time.Sleep(3 * ttl)
					rate := float64(sent.Load()-before) / time.Since(start).Seconds()
					lost := 0
					for _, h := range handles {
						if h != nil && h.Err() != nil {
							lost++
							if lost <= 3 {
								b.Logf("lost: %v", h.Err())
							}
						}
					}
					b.ReportMetric(float64(lost), "lost")
					b.ReportMetric(float64(failed.Load()), "failed_locks")
					b.ReportMetric(rate, "requests/s")
					_ = s.Close(context.Background())
				}
			})
		}
	}
}

// cleanupTree deletes root's tree on servers when the benchmark ends.
func cleanupTree(b *testing.B, servers, root string) {
	c := connect(b, servers, testSessionTimeout)
	b.Cleanup(func() { deleteTree(c, root) })
}

// deleteTree deletes root and every node under it, deepest first, in
// multi-operations of up to 500 deletes, so that a benchmark's thousands
// of keys do not stay on the shared server.
func deleteTree(c *zk.Conn, root string) {
	var levels [][]string
	var mu sync.Mutex
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		mu.Lock()
		for len(levels) <= depth {
			levels = append(levels, nil)
		}
		levels[depth] = append(levels[depth], p)
		mu.Unlock()
		kids, _, err := c.Children(p)
		if err != nil {
			return
		}
		var wg sync.WaitGroup
		slots := make(chan struct{}, 32)
		for _, k := range kids {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				walk(p+"/"+k, depth+1)
			})
		}
		wg.Wait()
	}
	walk(root, 0)
	for i := len(levels) - 1; i >= 0; i-- {
		for paths := levels[i]; len(paths) > 0; {
			n := min(500, len(paths))
			ops := make([]any, n)
			for j, p := range paths[:n] {
				ops[j] = &zk.DeleteRequest{Path: p, Version: -1}
			}
			if _, err := c.Multi(ops...); err != nil {
				for _, p := range paths[:n] {
					_ = c.Delete(p, -1)
				}
			}
			paths = paths[n:]
		}
	}
}
