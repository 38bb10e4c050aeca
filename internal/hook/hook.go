// Package hook joins package driver to the root package fence without an
// import cycle: driver imports fence for its vocabulary (Token, Lease,
// errors), so fence cannot import driver, and the functions that build
// and read fence's portable types are set here by fence's init and called
// by driver. Besides driver, guard uses it for a Handle's work context.
package hook

import (
	"context"
	"errors"
	"time"
)

// ErrAcquireRaced is driver.ErrAcquireRaced, declared here so that fence
// can recognise it.
var ErrAcquireRaced = errors.New("fence: acquire lost a race to an unseen writer")

// LockerSpec is what driver.NewLocker hands to fence: the driver (a
// value with the methods of driver.Locker), its limits and the options.
type LockerSpec struct {
	Driver                 any
	Name                   string
	MaxKeyLen, MaxOwnerLen int
	MinTTL, MaxTTL         time.Duration
	InProcess, ClockFree   bool
	MinRenewInterval       time.Duration
	Clock                  any // a fence.Clock, or nil
	Create                 func(context.Context) error
	Close                  func() error
}

// ResourceSpec is what driver.NewResource hands to fence.
type ResourceSpec struct {
	Driver    any
	Name      string
	MaxKeyLen int
	MaxToken  uint64
	Create    func(context.Context) error
	Close     func() error
}

// Set by package fence's init.
var (
	// NewLocker returns a *fence.Locker over s.
	NewLocker func(s LockerSpec) (any, error)
	// Locker returns the spec a *fence.Locker was built from.
	Locker func(l any) LockerSpec
	// NewResource returns a *fence.Resource over s.
	NewResource func(s ResourceSpec) (any, error)
	// Resource returns the spec a *fence.Resource was built from.
	Resource func(r any) ResourceSpec
	// Register registers an opener of lockers (kind "Locker") or
	// resources ("Resource") for scheme.
	Register func(kind, scheme string, opener any)
	// Schemes returns the registered schemes of kind, sorted, and the
	// URL form of each (compacted).
	Schemes func(kind string) (schemes, forms []string)
	// ValidateKey, ValidateTTL and ValidateToken are fence's checks of
	// keys and names, TTLs and tokens (a token as its uint64).
	ValidateKey   func(field, key string, maxLen int) error
	ValidateTTL   func(ttl, min, max time.Duration) error
	ValidateToken func(t uint64) error

	// WorkContext is Handle.Context for guard.Run, without the closure
	// of its CancelFunc: h is a *fence.Handle, and EndWork(ctx) is the
	// CancelFunc.
	WorkContext func(h any, parent context.Context) context.Context
	// EndWork cancels a context WorkContext returned.
	EndWork func(ctx context.Context)
)
