// Package driver is for authors of fence backends, not for its users: it
// holds the interfaces a locker or resource backend implements, the
// optional capabilities the portable types discover, and the registry of
// URL schemes, as database/sql/driver and gocloud.dev's blob/driver do.
//
// A backend implements Locker (or Resource) over its store's atomic
// operations and nothing else, and hands it to NewLocker (NewResource),
// which returns the *fence.Locker (*fence.Resource) that every backend's
// constructor returns. That portable type does once, for every backend,
// what the contract asks beyond the store (see Locker), and it discovers
// the driver's optional capabilities (BatchRenewer, ReleaseNotifier,
// Publisher, MultiAcquirer, Creator, Aser) once, when it is built: a wrapper of a driver (fault
// injection, say) must implement the capabilities of the driver it
// wraps, or they are lost.
//
// lockers/lockertest and resources/resourcetest certify a driver: run
// them on the portable type NewLocker or NewResource returns.
package driver

import (
	"context"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/hook"
)

// Locker is what a locker backend implements: the atomic operations on
// its store and nothing else. Users never call a driver; they call the
// *fence.Locker that NewLocker builds over it, which:
//
//   - validates keys, TTLs, owner ids and leases (a driver only ever sees
//     input within its Info), and generates owner ids;
//   - checks ctx before calling the driver, and makes sure an error
//     returned after ctx ended wraps ctx.Err();
//   - sets Lease.ValidUntil to the time the request was sent plus TTL, on
//     its Clock, and remembers the latest ValidUntil of every lease it
//     gave out, so that Renew and Release accept any copy of a lease and
//     refuse one whose latest renewal has run out on the local clock,
//     whatever the store says, with a *fence.NotHeldError;
//   - checks what the driver returns (a token 0 is a *fence.CorruptError),
//     and wraps every error in a *fence.OpError, "fence/<backend>: <op>
//     <key>: <cause>".
//
// A driver's methods are called concurrently. They return the errors of
// the contract unwrapped or wrapped (a *fence.HeldError, fence.ErrNotHeld
// or a *fence.NotHeldError, a *fence.CorruptError, ...); a driver never
// prefixes its errors with its name, the portable Locker does.
type Locker interface {
	// Info describes the backend and its limits. It is read once, by
	// NewLocker.
	Info() Info
	// Acquire takes key for owner for ttl if the key is free, expired
	// or new, in one atomic conditional operation, and returns the lease
	// with its new token. The returned ValidUntil may be zero; when set
	// and earlier than the portable Locker's send time plus ttl (a lease
	// found won late, after a lost answer), it is kept. A key held by
	// another owner, or by owner itself, gets a *fence.HeldError.
	Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error)
	// Renew extends lease by lease.TTL if owner and token still hold it
	// in the store, and returns fence.ErrNotHeld (or a
	// *fence.NotHeldError) if not.
	Renew(ctx context.Context, lease fence.Lease) error
	// Release frees lease if owner and token still hold it in the store
	// (compare-and-delete), and returns fence.ErrNotHeld (or a
	// *fence.NotHeldError) if not. The record and its counter stay.
	Release(ctx context.Context, lease fence.Lease) error
	// Break frees key whoever holds it, keeping its counter.
	Break(ctx context.Context, key string) error
	// Inspect describes key without taking it.
	Inspect(ctx context.Context, key string) (fence.LockInfo, error)
}

// BatchRenewer is a Locker that can renew many leases in one call
// (PostgreSQL: one statement). A Session's keepalive renews all its due
// leases in one RenewBatch call when the driver has it, and with one
// Renew per lease otherwise.
type BatchRenewer interface {
	// RenewBatch renews every lease of leases as Renew would, and returns
	// one error per lease, in order: nil for a lease extended,
	// fence.ErrNotHeld (or a *fence.NotHeldError) for one no longer held,
	// or the call's error for every lease when the call failed.
	RenewBatch(ctx context.Context, leases []fence.Lease) []error
}

// ReleaseNotifier is a Locker that can tell waiters when a key is
// released or broken, by any process (PostgreSQL: LISTEN/NOTIFY). A
// waiting Session.Lock uses it instead of polling, and an election's
// follower (election.Observe) to learn of a new term and its value.
type ReleaseNotifier interface {
	// NotifyRelease returns a channel that receives a value (without
	// blocking the sender: the channel has a buffer of one) each time key
	// may have been released, broken or published (Publisher), until
	// stop is called. It returns once notifications are active, so that
	// a release that happens after it returns is never missed. A
	// notification may be spurious; a release may also be signalled only
	// as one value for several.
	NotifyRelease(ctx context.Context, key string) (c <-chan struct{}, stop func(), err error)
}

// Publisher is a Locker that keeps a small public value with a lease,
// for fence.Locker.Publish: an election's leader publishes its address
// so that followers can read it with Inspect (fence.LockInfo.Value)
// without learning the owner id, which is a secret.
type Publisher interface {
	// Publish sets the value kept with lease if owner and token still
	// hold it in the store (compare-and-set), and returns fence.ErrNotHeld
	// (or a *fence.NotHeldError) if not. value has at most
	// fence.MaxValueLen bytes (any bytes, not only UTF-8); an empty value clears it. The
	// value belongs to the lease: Acquire starts every lease with none,
	// and Inspect reports it only while the lease is held. Publish keeps
	// the token and the expiry. A ReleaseNotifier signals a Publish to
	// the key's waiters as it signals a release.
	Publish(ctx context.Context, lease fence.Lease, value string) error
}

// MultiAcquirer is a Locker that can take several keys in one atomic
// operation (a transaction, a script, a multi-item conditional write),
// for fence.Session.LockAll. Without it the session takes the keys one
// at a time in a global order and gives back what it took when one is
// busy.
type MultiAcquirer interface {
	// AcquireAll takes every key of keys for the owner at the same index
	// of owners, for ttl, all or nothing: when any key is held (by
	// anyone, owner included) nothing is taken and the error is a
	// *fence.HeldError for a busy key. keys are distinct and sorted, at
	// least two; each lease is as Acquire would return it, in the order
	// of keys, each with its own key's token. A driver may refuse a set
	// it cannot take in one operation (too many keys for the store's
	// transactions) with an error matching errors.ErrUnsupported; the
	// session then takes the keys one at a time.
	AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error)
}

// Creator is a Locker or Resource that can create what it keeps its
// records in (a table, a container, a bucket), for fence.Locker.Create and
// fence.Resource.Create. What exists already is left as it is, and
// replicas starting together may all call it at once: each must succeed.
type Creator interface {
	Create(ctx context.Context) error
}

// Aser is a Locker or Resource that gives backend-specific values to
// fence.Locker.As and fence.Resource.As (its SDK client, say): As sets
// target, a pointer, and reports whether it did.
type Aser interface {
	As(target any) bool
}

// ErrAcquireRaced is what a driver's Acquire returns when its conditional
// write failed and the record it read next looked takeable: it lost a
// race it cannot see, and learnt nothing of the winner. The portable
// Locker tries once more, and reports a *fence.HeldError with the key only
// if that races too.
var ErrAcquireRaced = hook.ErrAcquireRaced

// Info describes a locker backend.
type Info struct {
	// Name names the backend in errors: "postgres" gives errors that
	// read "fence/postgres: acquire "k": ...". No space, colon, quote or
	// slash.
	Name string
	// MaxKeyLen is the longest key accepted, in bytes.
	MaxKeyLen int
	// MaxOwnerLen is the longest owner id accepted, in bytes. Default
	// (0): DefaultMaxOwnerLen.
	MaxOwnerLen int
	// MinTTL and MaxTTL bound the lease duration.
	MinTTL, MaxTTL time.Duration
	// InProcess is true for a store that lives in this process (memory):
	// lockers of other processes cannot see its leases.
	InProcess bool
	// ClockFree is true for a store whose leases run out by observation
	// (DynamoDB and Cloud Storage without trusted-clock): a lease that is
	// never released, its holder crashed, ends for a contender only once
	// that contender has seen the record unchanged for a whole lease on
	// its own clock. A contender that tries once and exits (a cron job
	// with --no-wait) then never takes the key over; it must wait longer
	// than the holder's TTL.
	ClockFree bool
	// MinRenewInterval is the shortest interval between two writes of
	// one key that the store sustains without throttling (Cloud Storage
	// takes about one write per second to one object name). NewSession
	// refuses a RenewInterval below it. Default (0): no limit.
	MinRenewInterval time.Duration
}

// DefaultMaxOwnerLen is the longest owner id accepted when a driver names
// no limit of its own.
const DefaultMaxOwnerLen = 1024

// LockerOptions are the optional settings of NewLocker. A nil
// *LockerOptions means all defaults.
type LockerOptions struct {
	// Clock supplies the send times from which Lease.ValidUntil is
	// computed, and tells when a lease has run out locally. Give the
	// driver the same Clock when it reads one. Default:
	// fence.SystemClock.
	Clock fence.Clock
	// Create creates the store's table, container or bucket, for
	// fence.Locker.Create, when the driver is no Creator (a URL opener
	// that knows how). Default: the driver's Create, if any.
	Create func(ctx context.Context) error
	// Close releases the clients a URL opener made, for
	// fence.Locker.Close. Default: nothing to close.
	Close func() error
}

// NewLocker returns the portable *fence.Locker over d. It checks d's
// Info: a name, a MaxKeyLen of at least 1, 0 < MinTTL <= MaxTTL and a
// MinRenewInterval that is not negative, and
// returns an error matching fence.ErrInvalid otherwise.
func NewLocker(d Locker, opts *LockerOptions) (*fence.Locker, error) {
	if d == nil {
		return nil, &fence.InvalidError{Field: "driver", Reason: "nil"}
	}
	if opts == nil {
		opts = &LockerOptions{}
	}
	info := d.Info()
	s := hook.LockerSpec{
		Driver: d, Name: info.Name, MaxKeyLen: info.MaxKeyLen, MaxOwnerLen: info.MaxOwnerLen,
		MinTTL: info.MinTTL, MaxTTL: info.MaxTTL, InProcess: info.InProcess, ClockFree: info.ClockFree,
		MinRenewInterval: info.MinRenewInterval, Create: opts.Create, Close: opts.Close,
	}
	if opts.Clock != nil {
		s.Clock = opts.Clock
	}
	l, err := hook.NewLocker(s)
	if err != nil {
		return nil, err
	}
	return l.(*fence.Locker), nil
}

// Wrap returns a new *fence.Locker over wrap(d), where d is the driver
// under l, with l's clock, Create and Close: for the project's tools
// (fault injection), not for programs, which reach a backend's client
// through l.As. The new Locker discovers the capabilities of the wrapper,
// not of d.
func Wrap(l *fence.Locker, wrap func(Locker) Locker) (*fence.Locker, error) {
	s := hook.Locker(l)
	s.Driver = wrap(s.Driver.(Locker))
	out, err := hook.NewLocker(s)
	if err != nil {
		return nil, err
	}
	return out.(*fence.Locker), nil
}

// LockerOf returns the driver under l, for a backend's package functions
// and tests that reach past the portable type, and for the project's
// tools.
func LockerOf(l *fence.Locker) Locker { return hook.Locker(l).Driver.(Locker) }

// InfoOf returns the Info of the driver under l, with the defaults
// NewLocker filled in.
func InfoOf(l *fence.Locker) Info {
	s := hook.Locker(l)
	return Info{
		Name: s.Name, MaxKeyLen: s.MaxKeyLen, MaxOwnerLen: s.MaxOwnerLen,
		MinTTL: s.MinTTL, MaxTTL: s.MaxTTL, InProcess: s.InProcess, ClockFree: s.ClockFree,
		MinRenewInterval: s.MinRenewInterval,
	}
}

// ClockOrSystem returns c, or fence.SystemClock when c is nil: the clock
// of a driver given an optional one.
func ClockOrSystem(c fence.Clock) fence.Clock {
	if c == nil {
		return fence.SystemClock{}
	}
	return c
}
