package torture

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Fault kinds, as counted in a report.
const (
	// FaultPause: a worker stopped longer than the TTL after reading,
	// its renewals stopped too, then it wrote with its old token.
	FaultPause = "pause"
	// FaultDelay: a request (HTTP) or a chunk of a connection
	// (PostgreSQL) was held back before being forwarded.
	FaultDelay = "delay"
	// FaultDropRequest: an HTTP request failed before it was sent.
	FaultDropRequest = "drop-req"
	// FaultDropResponse: an HTTP request reached the store, which
	// answered, and the answer was thrown away: the ambiguous case.
	FaultDropResponse = "drop-resp"
	// FaultCut: a PostgreSQL connection was cut in the middle, both ways.
	FaultCut = "cut"
	// FaultOutage: every HTTP request failed before sending for a while,
	// and every PostgreSQL connection was cut (the path to the store
	// restarted).
	FaultOutage = "outage"
	// FaultRestart: the store process was restarted, keeping its data.
	FaultRestart = "restart"
	// FaultFailover: the leader (etcd) or primary (Redis behind
	// Sentinel) of a replicated store was killed (SIGKILL), another
	// member took over, and the killed one came back as a follower or
	// replica.
	FaultFailover = "failover"
	// FaultSkew: a worker's clock was set off the true time (counted
	// once per worker with a non-zero skew).
	FaultSkew = "skew"
	// FaultSigstop: a worker process was stopped (SIGSTOP) for 1.5 to 2.5
	// TTLs, all its goroutines with it, then continued (SIGCONT); worker
	// 1's guaranteed pause is one in a run of processes (see
	// Config.Processes).
	FaultSigstop = "sigstop"
	// FaultSigkill: a worker process holding a lease was killed
	// (SIGKILL), and a fresh one with a new worker number took its place.
	FaultSigkill = "sigkill"
)

// FaultKinds lists the kinds in report order.
var FaultKinds = []string{FaultPause, FaultDelay, FaultDropRequest, FaultDropResponse, FaultCut, FaultOutage, FaultRestart, FaultFailover, FaultSkew, FaultSigstop, FaultSigkill}

// Counts counts injected faults by kind; safe for concurrent use. The
// zero value is ready.
type Counts struct {
	mu sync.Mutex
	n  map[string]int
	// onAdd, when set, is told of each fault counted: a worker process
	// forwards its counts to the run's.
	onAdd func(kind string)
}

// Add counts one fault of kind.
func (c *Counts) Add(kind string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[kind]++
	onAdd := c.onAdd
	c.mu.Unlock()
	if onAdd != nil {
		onAdd(kind)
	}
}

// Get returns the count of kind.
func (c *Counts) Get(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind]
}

// Snapshot returns a copy of the counts.
func (c *Counts) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.n))
	for k, v := range c.n {
		m[k] = v
	}
	return m
}

// FormatCounts writes the non-zero counts of m as "kind=n ...", in the
// order of FaultKinds, then any other kind.
func FormatCounts(m map[string]int) string {
	var parts []string
	for _, k := range FaultKinds {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	var other []string
	for k, v := range m {
		if v > 0 && !slices.Contains(FaultKinds, k) {
			other = append(other, fmt.Sprintf("%s=%d", k, v))
		}
	}
	slices.Sort(other)
	parts = append(parts, other...)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// NetFaults are the probabilities and sizes of network faults, per HTTP
// request or per forwarded chunk of a PostgreSQL connection.
type NetFaults struct {
	// Delay, DropRequest and DropResponse are probabilities per HTTP
	// request; Delay and Cut per chunk forwarded by the proxy.
	Delay, DropRequest, DropResponse, Cut float64
	// MaxDelay bounds one delay (each is drawn from (0, MaxDelay]).
	MaxDelay time.Duration
}

func chance(p float64) bool { return p > 0 && rand.Float64() < p }

func randDuration(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo)
}
