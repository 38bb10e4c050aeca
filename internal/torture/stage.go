package torture

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stage is the environment of one run: the fault-injecting paths to the
// stores, the counts of faults, the names the run may use, and what to undo
// when it ends. Backends name their stores on it (LockerKind.URL,
// ResourceKind.URL).
type Stage struct {
	// ID is unique to the run: lower-case letters and digits, starting
	// with a letter. Backends use it to name tables, buckets and keys.
	ID string
	// Counts counts the faults injected.
	Counts *Counts
	// Dir is a directory of the run's own, removed at the end.
	Dir string

	net       NetFaults
	transport *Transport
	clean     *http.Transport

	outageOnce sync.Once
	// calm is held for writing by a disruption and for reading by the
	// guaranteed stale read and write, which no restart may interrupt.
	calm     sync.RWMutex
	mu       sync.Mutex
	undo     []func()
	disrupts []disruptor
	// servers serialises the set-up of the paths to the servers below
	// (a private server each), so that a store is set up once; it is held
	// across calls that take mu.
	servers  sync.Mutex
	pg       *pgPath
	mysql    *mysqlPath
	zk       *zkPath
	etcd     *etcdPath
	nats     *natsPath
	sentinel *sentinelPath
	emus     map[string]*emulator // by emulatorSpec.name
	proxies  map[string]*Proxy    // by upstream: see proxied
	logf     func(format string, args ...any)
}

// disruptor interrupts a store or the path to it, and returns when the
// store answers again (or ctx ends).
type disruptor struct {
	name string
	run  func(ctx context.Context) error
	done *atomic.Int64 // how many times it ran to its end
}

func newStage(faults NetFaults, logf func(format string, args ...any)) (*Stage, error) {
	dir, err := os.MkdirTemp("", "fence-torture-")
	if err != nil {
		return nil, err
	}
	s := &Stage{
		ID:     "t" + strings.ToLower(rand.Text()[:11]),
		Counts: &Counts{},
		Dir:    dir,
		net:    faults,
		clean:  http.DefaultTransport.(*http.Transport).Clone(),
		logf:   logf,
	}
	s.transport = NewTransport(nil, faults, s.Counts)
	s.Defer(func() { _ = os.RemoveAll(dir) })
	s.Defer(s.clean.CloseIdleConnections)
	return s, nil
}

// HTTPClient returns a client whose requests go through the run's
// fault-injecting Transport. The first request through it makes outages
// of the HTTP path one of the run's disruptions: a run opens every backend
// with it, and only those that speak HTTP use it.
func (s *Stage) HTTPClient() *http.Client { return &http.Client{Transport: faultyPath{s}} }

// faultyPath is the stage's Transport, noting its first use.
type faultyPath struct{ s *Stage }

func (p faultyPath) RoundTrip(req *http.Request) (*http.Response, error) {
	s := p.s
	s.outageOnce.Do(func() {
		s.addDisruptor("http-outage", func(context.Context) error {
			s.transport.Outage(randDuration(200*time.Millisecond, time.Second))
			return nil
		})
	})
	return s.transport.RoundTrip(req)
}

// CleanHTTPClient returns a client without faults, for setting up and for
// reading back after the run.
func (s *Stage) CleanHTTPClient() *http.Client { return &http.Client{Transport: s.clean} }

// Defer registers f to run when the run ends, in reverse order.
func (s *Stage) Defer(f func()) {
	s.mu.Lock()
	s.undo = append(s.undo, f)
	s.mu.Unlock()
}

func (s *Stage) addDisruptor(name string, run func(ctx context.Context) error) {
	s.mu.Lock()
	s.disrupts = append(s.disrupts, disruptor{name, run, &atomic.Int64{}})
	s.mu.Unlock()
}

// calmly runs f while no disruption runs: one that has begun ends first,
// and none begins before f returns.
func (s *Stage) calmly(f func()) {
	s.calm.RLock()
	defer s.calm.RUnlock()
	f()
}

// disruptors returns the registered disruptors.
func (s *Stage) disruptors() []disruptor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]disruptor(nil), s.disrupts...)
}

// disrupted returns, by name, how many times each registered disruptor
// ran to its end.
func (s *Stage) disrupted() map[string]int {
	m := map[string]int{}
	for _, d := range s.disruptors() {
		m[d.name] += int(d.done.Load())
	}
	return m
}

// close undoes what the run set up.
func (s *Stage) close() {
	s.mu.Lock()
	undo := s.undo
	s.undo = nil
	s.mu.Unlock()
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
}

// cleanupContext is for removing what a run created, after its own
// context may have ended.
func cleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
