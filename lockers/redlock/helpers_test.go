package redlock

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testproc"
)

// master is one redis-server of a test, on a port of its own.
type master struct {
	proc    *testproc.Proc
	addr    string
	client  *goredis.Client
	persist bool
}

// persistence of the masters a test starts.
type persistence int

const (
	// volatile masters keep nothing across a restart: --save ''
	// --appendonly no.
	volatile persistence = iota
	// durable masters write every change to their append-only file
	// before answering: --appendonly yes --appendfsync always.
	durable
)

// startMasters starts n independent masters and waits until each
// answers. They are killed when the test ends.
func startMasters(t testing.TB, n int, p persistence) []*master {
	t.Helper()
	bin := testenv.RedisServer(t)
	ms := make([]*master, n)
	for i := range ms {
		port := testproc.FreePort(t)
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", t.TempDir(),
			"--save", "", "--protected-mode", "no", "--daemonize", "no", "--loglevel", "warning"}
		if p == durable {
			args = append(args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			args = append(args, "--appendonly", "no")
		}
		m := &master{addr: "127.0.0.1:" + strconv.Itoa(port), persist: p == durable}
		m.proc = testproc.Start(t, fmt.Sprintf("redis-%d", i), bin, args...)
		m.client = newClient(m.addr)
		t.Cleanup(func() { _ = m.client.Close() })
		ms[i] = m
	}
	for _, m := range ms {
		m.waitReady(t)
	}
	return ms
}

// newClient returns a client of database 0 that fails fast, as Redlock
// wants.
func newClient(addr string) *goredis.Client { return newClientDB(addr, 0) }

// newClientDB returns a client of database db that fails fast: a killed
// master refuses connections at once; the timeouts are for a machine
// busy with the race detector.
func newClientDB(addr string, db int) *goredis.Client {
	return goredis.NewClient(&goredis.Options{
		Addr:                  addr,
		DB:                    db,
		DialTimeout:           2 * time.Second,
		DialerRetries:         1,
		ReadTimeout:           2 * time.Second,
		WriteTimeout:          2 * time.Second,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
	})
}

// waitReady waits until m answers PING (and has loaded its data).
func (m *master) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		err := m.client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s at %s does not answer: %v", m.proc, m.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill kills m with SIGKILL, as a crash would.
func (m *master) kill() { m.proc.Kill() }

// restart starts m again after kill and waits until it answers.
func (m *master) restart(t testing.TB) {
	t.Helper()
	m.proc.Restart()
	m.waitReady(t)
}

// crash kills m and starts it again: a volatile master comes back empty,
// a durable one with everything it acknowledged.
func (m *master) crash(t testing.TB) {
	t.Helper()
	m.kill()
	m.restart(t)
}

// clients returns the masters' clients.
func clients(ms []*master) []Client {
	cs := make([]Client, len(ms))
	for i, m := range ms {
		cs[i] = m.client
	}
	return cs
}

// newLocker returns a Locker over ms, closed when the test ends.
func newLocker(t testing.TB, ms []*master, opts *Options) *fence.Locker {
	t.Helper()
	l, _ := newStoreLocker(t, ms, opts)
	return l
}

// newStoreLocker is newLocker, and returns the store under the Locker
// too, for the tests that adjust it, look at its records or call it
// directly.
func newStoreLocker(t testing.TB, ms []*master, opts *Options) (*fence.Locker, *store) {
	t.Helper()
	d, err := newStore(clients(ms), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l, err := d.locker(nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, d
}

// counters returns the counter record of key on each master ("" where
// there is none or the master is down).
func counters(t testing.TB, ms []*master, prefix, key string) []string {
	t.Helper()
	out := make([]string, len(ms))
	for i, m := range ms {
		if !m.proc.Running() {
			continue
		}
		v, err := m.client.Get(t.Context(), prefix+"token:"+key).Result()
		if err != nil && err != goredis.Nil {
			t.Fatalf("GET on %s: %v", m.proc, err)
		}
		out[i] = v
	}
	return out
}

// stillProposals makes d propose token 1 first on every attempt, as if
// its clock stood still before 1970: every token of a key after its
// first then comes from the counters a quorum reported. Call it before
// the Locker over d is used.
func stillProposals(d *store) {
	d.propose = func(time.Time) fence.Token { return 1 }
}

// stillLocker returns a Locker over ms whose store has stillProposals.
func stillLocker(t testing.TB, ms []*master) *fence.Locker {
	t.Helper()
	l, d := newStoreLocker(t, ms, nil)
	stillProposals(d)
	return l
}
