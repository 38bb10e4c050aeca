package torture

import (
	"context"
	"fmt"
	"time"
)

// Config sets the size and the violence of a run. Zero fields take the
// defaults of DefaultConfig.
type Config struct {
	// Duration is how long the workers run. Paused workers finish their
	// write after it. Default: 10 s.
	Duration time.Duration
	// Workers and Keys: how many workers compete for how many lease
	// keys (in a transfer run, accounts: at least 3). Defaults: 4, and 2
	// (4 in a transfer run).
	Workers, Keys int
	// Control switches the resource-side token check off.
	Control bool
	// Transfer runs the transfer workload instead of read-modify-writes
	// of lists: workers move money between accounts of the pair's SQL
	// database under multi-key locks (fence.Session.LockAll), and the
	// checker verifies that the total is conserved, that no account is
	// negative, and that the balances agree with the transfers recorded
	// (see transfer.go). The pair's resource must be resources/sql.
	Transfer bool
	// PauseChance is the probability that a lease's first write is
	// preceded by a pause of 1.5 to 2.5 TTLs. Worker 1 always pauses in
	// its first lease; no pause begins that would outlast Duration.
	// Default: 0.25.
	PauseChance float64
	// LongJobChance is the probability that a lease is a long job: held
	// for 2 to 3 TTLs, through several renewals, with a write every half
	// TTL, then released. The last worker's first lease is one always (the
	// guaranteed long job: 3 TTLs or up to the end of the run, on a key of
	// its own, off the faults); none begins that would not fit in
	// Duration. Negative: only the guaranteed one. Default: 0.1.
	LongJobChance float64
	// Net are the network faults. Default: DefaultNetFaults.
	Net NetFaults
	// DisruptEvery is the mean time between disruptions (outages of the
	// HTTP path, PostgreSQL restarts or cuts), taken in turn; each
	// interval is drawn from half to one and a half of it. Negative: no
	// disruptions. Default: 4 s.
	DisruptEvery time.Duration
	// OpTimeout bounds each read and each write. Default: 5 s.
	OpTimeout time.Duration
	// EntriesPerName caps the list stored under one resource name; a full
	// list makes the workers move on to the key's next name, so values
	// stay small. Default: 100.
	EntriesPerName int
	// LinearTimeout bounds the porcupine check of one resource name.
	// Default: 10 s.
	LinearTimeout time.Duration
	// Processes runs each worker as an OS process of its own (the
	// program re-executed: see WorkerMain) and adds process faults:
	// SIGSTOP of a worker for 1.5 to 2.5 TTLs, worker 1's guaranteed
	// pause included, and SIGKILL of a lease holder, a fresh process
	// taking its place. Pairs whose store lives in the run's process (a
	// mem:// locker or resource) run their workers in the process
	// whatever it says (see Result.Processes).
	Processes bool
	// Logf, when set, receives progress messages.
	Logf func(format string, args ...any) `json:"-"`
	// SetUp, when set, is called once the run's stores, servers and
	// workers are set up, before the workers start and Duration begins; the
	// run waits for it to return, and ends with its error if it returns
	// one. Runs started together use it to set up before any of them
	// starts (a private ZooKeeper ensemble or MariaDB server takes seconds
	// of CPU to start, which would starve the runs already going).
	SetUp func(ctx context.Context) error `json:"-"`
}

// DefaultNetFaults are the network faults of a run when Config.Net is zero:
// per HTTP request, 5% delayed (up to 300 ms), 3% dropped before sending
// and 3% answered but the answer lost; per chunk through the PostgreSQL
// proxy, 5% delayed and 0.5% cutting the connection.
var DefaultNetFaults = NetFaults{Delay: 0.05, DropRequest: 0.03, DropResponse: 0.03, Cut: 0.005, MaxDelay: 300 * time.Millisecond}

// DefaultConfig returns the default configuration for a run of d.
func DefaultConfig(d time.Duration) Config {
	c := Config{Duration: d}
	c.fill()
	return c
}

func (c *Config) fill() {
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Keys == 0 && c.Transfer {
		c.Keys = 4
	}
	if c.Keys == 0 {
		c.Keys = 2
	}
	if c.PauseChance == 0 {
		c.PauseChance = 0.25
	}
	if c.LongJobChance == 0 {
		c.LongJobChance = 0.1
	}
	if c.Net == (NetFaults{}) {
		c.Net = DefaultNetFaults
	}
	if c.DisruptEvery == 0 {
		c.DisruptEvery = 4 * time.Second
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = 5 * time.Second
	}
	if c.EntriesPerName == 0 {
		c.EntriesPerName = 100
	}
	if c.LinearTimeout == 0 {
		c.LinearTimeout = 10 * time.Second
	}
}

func (c *Config) validate() error {
	switch {
	case c.Duration < 0, c.Workers < 1, c.Keys < 1, c.PauseChance < 0, c.PauseChance > 1, c.LongJobChance > 1,
		c.OpTimeout <= 0, c.EntriesPerName < 1, c.LinearTimeout <= 0:
		return fmt.Errorf("torture: impossible config %+v", *c)
	case c.Transfer && c.Keys < 3:
		return fmt.Errorf("torture: a transfer run needs at least 3 accounts (Keys), not %d: with 2, every transfer touches both", c.Keys)
	}
	return nil
}
