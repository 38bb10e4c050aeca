package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fencekit/fence"
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

// NewLocker returns the locker worker uses, reading time from clock. A
// backend whose store lives in this process returns one Locker for all.
type NewLocker func(worker int, clock fence.Clock) (fence.Locker, error)

// LockerKind is a locker backend in one configuration.
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
	// Open sets the backend up on the stage and returns how to make the
	// workers' lockers, whose requests go through the stage's faults.
	Open func(ctx context.Context, s *Stage) (NewLocker, error)
}

// ResourceKind is a resource backend.
type ResourceKind struct {
	// Name names it in reports, like "sql-postgres".
	Name string
	// Env lists the environment variables it needs.
	Env []string
	// Open sets the backend up on the stage and returns the resource the
	// workers write through the stage's faults, and the same resource
	// without faults: the run reads back through it, and the guaranteed
	// stale write goes through it. When fenced is false the token check
	// of both is off (the control run): the backend's own unfenced mode,
	// or Unfenced.
	Open func(ctx context.Context, s *Stage, fenced bool) (work, clean fence.Resource, err error)
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
// LockerKind or ResourceKind (see lockers.go, resources.go) and a line
// here.
func Pairs() []Pair {
	return []Pair{
		{MemoryLocker, MemoryResource},
		{PostgresLocker, SQLPostgresResource},
		{PostgresLocker, SQLiteResource},
		{DynamoLocker, DynamoResource},
		{DynamoTrustedLocker, S3Resource},
		{GCSLocker, GCSResource},
		{GCSTrustedLocker, MemoryResource},
		{AzblobLocker, S3Resource},
	}
}
