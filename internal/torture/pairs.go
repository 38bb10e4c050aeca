package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// ErrUnavailable: a backend's server is not configured (its environment
// variable is unset). See UnavailableError.
var ErrUnavailable = errors.New("torture: backend unavailable")

// UnavailableError names the environment variable a backend needs.
type UnavailableError struct{ Env string }

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("torture: backend unavailable: %s is unset (scripts/services.sh exports it)", e.Env)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

func unavailable(env string) error { return &UnavailableError{Env: env} }

// need returns the value of each environment variable, or an
// *UnavailableError for the first one unset.
func need(envs ...string) ([]string, error) {
	vals := make([]string, len(envs))
	for i, e := range envs {
		if vals[i] = os.Getenv(e); vals[i] == "" {
			return nil, unavailable(e)
		}
	}
	return vals, nil
}

// URLs names a backend's store on a stage: faulty is the URL the workers
// open, through the stage's faults, and clean the one the store is created,
// read back and removed through, without faults. Over HTTP they are one URL
// (see oneURL): the faults are in the HTTP client the run gives the
// opener (Stage.HTTPClient or Stage.CleanHTTPClient). PostgreSQL's differ
// in their address (Stage.Postgres): the faulty one goes through the
// stage's proxy. The names in them are unique to the run (from Stage.ID),
// the servers those of the environment.
type URLs func(ctx context.Context, s *Stage) (faulty, clean string, err error)

// Remover removes the store at clean when the run ends, after the run
// created it.
type Remover func(ctx context.Context, s *Stage, clean string) error

// LockerKind is a locker backend in one configuration. The run opens its
// lockers from URL with fence.OpenLocker, through the backend's
// registered URL opener (package backends registers them all): once
// without faults to create the store (fence.Locker.Create, skipped where
// there is nothing to create), then once per worker, with the worker's
// clock and the stage's faulty HTTP client, so that each worker has a
// Locker and clients of its own, like separate processes (memory's named
// locker, mem://NAME, is one Locker that all share).
type LockerKind struct {
	// Name names it in reports, like "dynamo-trusted".
	Name string
	// Env lists the environment variables it needs.
	Env []string
	// TTL is the lease duration the workers ask for.
	TTL time.Duration
	// MaxSkew is, for a locker in trusted-clock mode, the clock skew it is
	// configured to tolerate; workers then get clocks off by up to twice
	// as much either way, so some pairs of workers exceed it. Zero for
	// lockers that do not trust clocks.
	MaxSkew time.Duration
	// URL names the store (see URLs).
	URL URLs
	// Remove, when set, removes the store when the run ends.
	Remove Remover
	// Expected, when set, names the violations that the backend's
	// documented guarantees allow in this configuration under the run's
	// faults: a fenced run reports them apart, passes when every
	// violation is of an expected kind, and fails when none showed (the
	// demonstration failed).
	Expected *Expected
	// Wave is the half of the pairs its pairs run with when the machine
	// cannot run them all at once (see Waves): 1 for the lockers reached
	// over TCP through the run's proxies (PostgreSQL, etcd, Redis,
	// Redlock, MariaDB, ZooKeeper, NATS), 0 for the others.
	Wave int
}

// Waves splits pairs in the two halves that run one after the other on a
// small machine, in order: those whose locker's Wave is 0, then those
// whose locker's Wave is 1; an empty half is left out. On two cores, the
// runs of all pairs at once, fenced and control with worker
// processes, leave the machine so loaded that the pairs reached over TCP
// write a few dozen times a minute and some control runs show no
// violation; each half alone runs well.
func Waves(pairs []Pair) [][]Pair {
	var halves [2][]Pair
	for _, p := range pairs {
		w := min(max(p.Locker.Wave, 0), 1)
		halves[w] = append(halves[w], p)
	}
	var out [][]Pair
	for _, h := range halves {
		if len(h) > 0 {
			out = append(out, h)
		}
	}
	return out
}

// Expected names violation kinds a locker's documented guarantees allow,
// and why. The locker's own kinds (KindTokenReissued, KindTokenRegressed)
// are expected whenever they show; the resource's (KindStaleAccepted,
// KindLost, KindPorcupine, ...) only where a write involved carries a
// token that was reissued on its key, since a fenced resource accepts a
// second holder of the same token.
type Expected struct {
	Kinds []string
	// Short labels them in the table, like "async replication"; Why
	// says it in full.
	Short, Why string
}

// ResourceKind is a resource backend. The run opens it from URL with
// fence.OpenResource: once without faults, to create the store
// (fence.Resource.Create, skipped where there is nothing to create), to
// read it back after the run and for the guaranteed stale write; and once
// with the stage's faulty HTTP client, for the workers, who share it.
type ResourceKind struct {
	// Name names it in reports, like "sql-postgres".
	Name string
	// Env lists the environment variables it needs.
	Env []string
	// URL names the store (see URLs).
	URL URLs
	// Remove, when set, removes the store when the run ends.
	Remove Remover
	// Unfenced, for a backend with an unfenced mode of its own (not
	// offered by URL), opens the control run's resources in that mode, on
	// the store at the URLs (created): work through the stage's faults,
	// check without. When nil, a control run wraps the resources opened
	// from the URLs in Unfenced.
	Unfenced func(ctx context.Context, s *Stage, faulty, clean string) (work, check resource, err error)
}

// Pair is a locker and a resource run together.
type Pair struct {
	Locker   LockerKind
	Resource ResourceKind
}

// Name is "locker/resource".
func (p Pair) Name() string { return p.Locker.Name + "/" + p.Resource.Name }

// Env lists the environment variables the pair needs.
func (p Pair) Env() []string {
	return append(append([]string(nil), p.Locker.Env...), p.Resource.Env...)
}

// Pairs returns the matrix: every locker with at least one resource and
// every resource with at least one locker. Adding a backend is a
// LockerKind or ResourceKind (see lockers.go, resources.go), which names
// its store by a URL of the backend's scheme, and a line here.
func Pairs() []Pair {
	return []Pair{
		{MemoryLocker, MemoryResource},
		{SQLiteLocker, SQLiteResource},
		{PostgresLocker, SQLPostgresResource},
		{PostgresLocker, SQLiteResource},
		{DynamoLocker, DynamoResource},
		{DynamoTrustedLocker, S3Resource},
		{GCSLocker, GCSResource},
		{GCSTrustedLocker, MemoryResource},
		{AzblobLocker, AzblobResource},
		{S3Locker, S3Resource},
		{EtcdLocker, EtcdResource},
		{RedisLocker, RedisResource},
		{RedlockLocker, SQLiteResource},
		{MySQLLocker, SQLMySQLResource},
		{ZooKeeperLocker, SQLiteResource},
		{KubernetesLocker, SQLiteResource},
		{RedisSentinelLocker, SQLiteResource},
		{RedisSentinelWaitLocker, SQLiteResource},
		{NATSLocker, SQLiteResource},
	}
}

// TransferPairs returns the pairs of the transfer workload (see
// Config.Transfer): every locker of Pairs, with the first SQL resource
// it is paired with there, or else SQLiteResource (a file of the run's,
// needing no server).
func TransferPairs() []Pair {
	var out []Pair
	for _, p := range Pairs() {
		if slices.ContainsFunc(out, func(q Pair) bool { return q.Locker.Name == p.Locker.Name }) {
			continue
		}
		res := SQLiteResource
		for _, q := range Pairs() {
			if q.Locker.Name == p.Locker.Name && strings.HasPrefix(q.Resource.Name, "sql-") {
				res = q.Resource
				break
			}
		}
		out = append(out, Pair{Locker: p.Locker, Resource: res})
	}
	return out
}
