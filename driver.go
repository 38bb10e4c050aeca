package fence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LockerDriver is what a locker backend implements: the atomic operations
// on its store and nothing else. Users never call a driver; they call the
// PortableLocker that NewLocker builds over it, which does once, for every
// backend, what the contract of Locker asks beyond the store:
//
//   - it validates keys, TTLs, owner ids and leases (a driver only ever
//     sees input within its DriverInfo), and generates owner ids;
//   - it checks ctx before calling the driver, and makes sure an error
//     returned after ctx ended wraps ctx.Err();
//   - it sets Lease.ValidUntil to the time the request was sent plus TTL,
//     on its Clock, and remembers the latest ValidUntil of every lease it
//     gave out, so that Renew and Release accept any copy of a lease and
//     refuse one whose latest renewal has run out on the local clock,
//     whatever the store says, with a *NotHeldError;
//   - it checks what the driver returns (a token 0 is a *CorruptError),
//     and wraps every error in a *OpError, "fence/<backend>: <op> <key>:
//     <cause>".
//
// A driver's methods are called concurrently. They return the errors of
// the contract unwrapped or wrapped (a *HeldError, ErrNotHeld or a
// *NotHeldError, a *CorruptError, ...); a driver never prefixes its errors
// with its name, the PortableLocker does. lockers/lockertest certifies a
// driver: run it on fence.NewLocker(driver, ...).
type LockerDriver interface {
	// Info describes the backend and its limits.
	Info() DriverInfo
	// Acquire takes key for owner for ttl if the key is free, expired
	// or new, in one atomic conditional operation, and returns the lease
	// with its new token. The returned ValidUntil may be zero; when set
	// and earlier than the PortableLocker's send time plus ttl (a lease
	// found won late, after a lost answer), it is kept. A key held by
	// another owner, or by owner itself, gets a *HeldError.
	Acquire(ctx context.Context, key, owner string, ttl time.Duration) (Lease, error)
	// Renew extends lease by lease.TTL if owner and token still hold it
	// in the store, and returns ErrNotHeld (or a *NotHeldError) if not.
	Renew(ctx context.Context, lease Lease) error
	// Release frees lease if owner and token still hold it in the store
	// (compare-and-delete), and returns ErrNotHeld (or a *NotHeldError)
	// if not. The record and its counter stay.
	Release(ctx context.Context, lease Lease) error
	// Break frees key whoever holds it, keeping its counter.
	Break(ctx context.Context, key string) error
	// Inspect describes key without taking it.
	Inspect(ctx context.Context, key string) (LockInfo, error)
}

// BatchRenewer is a LockerDriver that can renew many leases in one call
// (PostgreSQL: one statement). PortableLocker.RenewMany, which a Session's
// keepalive calls once per round, uses it when the driver has it, and
// calls Renew once per lease otherwise.
type BatchRenewer interface {
	// RenewBatch renews every lease of leases as Renew would, and returns
	// one error per lease, in order: nil for a lease extended, ErrNotHeld
	// (or a *NotHeldError) for one no longer held, or the call's error
	// for every lease when the call failed.
	RenewBatch(ctx context.Context, leases []Lease) []error
}

// ReleaseNotifier is a LockerDriver that can tell waiters when a key is
// released or broken, by any process (PostgreSQL: LISTEN/NOTIFY). A
// PortableLocker has the same method (it passes the call on to its
// driver), and so may a wrapper of one: a blocked Session.Lock uses it,
// when its Locker is a ReleaseNotifier, instead of polling.
type ReleaseNotifier interface {
	// NotifyRelease returns a channel that receives a value (without
	// blocking the sender: the channel has a buffer of one) each time key
	// may have been released or broken, until stop is called. It returns
	// once notifications are active, so that a release that happens after
	// it returns is never missed. A notification may be spurious; a
	// release may also be signalled only as one value for several.
	NotifyRelease(ctx context.Context, key string) (c <-chan struct{}, stop func(), err error)
}

// ErrAcquireRaced is what a LockerDriver's Acquire returns when its
// conditional write failed and the record it read next looked takeable:
// it lost a race it cannot see, and learnt nothing of the winner. The
// PortableLocker tries once more, and reports a *HeldError with the key
// only if that races too.
var ErrAcquireRaced = errors.New("fence: acquire lost a race to an unseen writer")

// DriverInfo describes a locker backend.
type DriverInfo struct {
	// Name names the backend in errors: "postgres" gives errors that
	// read "fence/postgres: acquire "k": ...".
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
}

// DefaultMaxOwnerLen is the longest owner id accepted when a driver names
// no limit of its own.
const DefaultMaxOwnerLen = 1024

// LockerOptions configure a PortableLocker. A nil *LockerOptions means all
// defaults.
type LockerOptions struct {
	// Clock supplies the send times from which Lease.ValidUntil is
	// computed, and tells when a lease has run out locally. Give the
	// driver the same Clock when it reads one. Default: SystemClock.
	Clock Clock
}

// PortableLocker is the Locker of every backend: the lease policy of the
// contract over a LockerDriver (see there for what it does). Create it
// with NewLocker, or get it from a backend's constructor or OpenLocker.
// It is safe for concurrent use.
type PortableLocker struct {
	d      LockerDriver
	info   DriverInfo
	clock  Clock
	leases *book
	create func(context.Context) error
	close  func() error
}

var _ Locker = (*PortableLocker)(nil)

// NewLocker returns the PortableLocker over d. It checks d's Info: a name,
// a MaxKeyLen of at least 1 and 0 < MinTTL <= MaxTTL.
func NewLocker(d LockerDriver, opts *LockerOptions) (*PortableLocker, error) {
	if d == nil {
		return nil, &InvalidError{Field: "driver", Reason: "nil"}
	}
	info := d.Info()
	if info.MaxOwnerLen == 0 {
		info.MaxOwnerLen = DefaultMaxOwnerLen
	}
	switch {
	case info.Name == "" || strings.ContainsAny(info.Name, " :\"/"):
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("name %q is empty or has a space, colon, quote or slash", info.Name)}
	case info.MaxKeyLen < 1 || info.MaxOwnerLen < 1:
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%s: key and owner limits %d and %d must be at least 1", info.Name, info.MaxKeyLen, info.MaxOwnerLen)}
	case info.MinTTL <= 0 || info.MaxTTL < info.MinTTL:
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%s: TTL range %v to %v is empty or not positive", info.Name, info.MinTTL, info.MaxTTL)}
	}
	var clock Clock
	if opts != nil {
		clock = opts.Clock
	}
	return &PortableLocker{d: d, info: info, clock: ClockOrSystem(clock), leases: new(book)}, nil
}

// Info returns the backend's name and limits.
func (l *PortableLocker) Info() DriverInfo { return l.info }

// Driver returns the driver under l, for backend-specific calls.
func (l *PortableLocker) Driver() LockerDriver { return l.d }

// Acquire implements Locker.
func (l *PortableLocker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *AcquireOptions) (Lease, error) {
	if err := l.checkKey(key); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	if err := ValidateTTL(ttl, l.info.MinTTL, l.info.MaxTTL); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	owner := opts.OwnerOrNew()
	if err := ValidateKey("owner", owner, l.info.MaxOwnerLen); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	if err := ctx.Err(); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	sent := l.clock.Now()
	lease, err := l.d.Acquire(ctx, key, owner, ttl)
	if errors.Is(err, ErrAcquireRaced) {
		if lease, err = l.d.Acquire(ctx, key, owner, ttl); errors.Is(err, ErrAcquireRaced) {
			err = &HeldError{Key: key}
		}
	}
	if err != nil {
		if he, ok := errors.AsType[*HeldError](err); ok && he.Key == "" {
			he.Key = key
		}
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	switch {
	case !lease.Token.Valid():
		return Lease{}, l.fail(ctx, "acquire", key, &CorruptError{Key: key, Reason: "the store issued token 0"})
	case lease.Key != key || lease.Owner != owner:
		return Lease{}, l.fail(ctx, "acquire", key, fmt.Errorf("driver returned a lease on %q for %s, not for the key and owner asked", lease.Key, orNobody(OwnerFingerprint(lease.Owner))))
	}
	lease.TTL = ttl
	if limit := sent.Add(ttl); lease.ValidUntil.IsZero() || lease.ValidUntil.After(limit) {
		lease.ValidUntil = limit
	}
	l.leases.record(lease, sent)
	return lease, nil
}

// Renew implements Locker. A lease whose latest renewal ran out on l's
// Clock is refused with a *NotHeldError without asking the store.
func (l *PortableLocker) Renew(ctx context.Context, lease Lease) (Lease, error) {
	if err := l.renewable(ctx, lease); err != nil {
		return Lease{}, l.fail(ctx, "renew", lease.Key, err)
	}
	sent := l.clock.Now()
	if err := l.ranOut(&lease, sent); err != nil {
		return Lease{}, l.fail(ctx, "renew", lease.Key, err)
	}
	return l.renewed(ctx, lease, sent, l.d.Renew(ctx, lease))
}

// renewable checks a lease given to Renew or RenewMany, and ctx.
func (l *PortableLocker) renewable(ctx context.Context, lease Lease) error {
	if err := l.checkLease(lease); err != nil {
		return err
	}
	if err := ValidateTTL(lease.TTL, l.info.MinTTL, l.info.MaxTTL); err != nil {
		return err
	}
	return ctx.Err()
}

// renewed settles the driver's answer err to the renewal of lease sent at
// sent: the renewed lease, or the wrapped error (forgetting a lease no
// longer held).
func (l *PortableLocker) renewed(ctx context.Context, lease Lease, sent time.Time, err error) (Lease, error) {
	if err != nil {
		if errors.Is(err, ErrNotHeld) {
			l.leases.forget(lease)
		}
		return Lease{}, l.fail(ctx, "renew", lease.Key, err)
	}
	lease.ValidUntil = sent.Add(lease.TTL)
	l.leases.record(lease, sent)
	return lease, nil
}

// RenewMany renews every lease of leases as Renew would, and returns the
// renewed leases and one error per lease, in order. A driver that is a
// BatchRenewer is asked once for all of them; otherwise Renew is called
// once per lease. A Session's keepalive calls it once per round.
//
// A Session calls RenewMany whenever its Locker has the method, so a type
// that embeds a *PortableLocker and changes Renew (to inject faults, to
// trace) must define RenewMany too, or the session's renewals bypass its
// Renew.
func (l *PortableLocker) RenewMany(ctx context.Context, leases []Lease) ([]Lease, []error) {
	batcher, batch := l.d.(BatchRenewer)
	if !batch {
		return RenewEach(ctx, l, leases)
	}
	out, errs := make([]Lease, len(leases)), make([]error, len(leases))
	var todo []Lease
	var at []int
	sent := l.clock.Now()
	for i, lease := range leases {
		err := l.renewable(ctx, lease)
		if err == nil {
			err = l.ranOut(&lease, sent)
		}
		if err != nil {
			errs[i] = l.fail(ctx, "renew", lease.Key, err)
			continue
		}
		todo = append(todo, lease)
		at = append(at, i)
	}
	if len(todo) == 0 {
		return out, errs
	}
	results := batcher.RenewBatch(ctx, todo)
	if len(results) != len(todo) {
		err := fmt.Errorf("driver answered %d renewals for %d leases", len(results), len(todo))
		for _, i := range at {
			errs[i] = l.fail(ctx, "renew", leases[i].Key, err)
		}
		return out, errs
	}
	for j, err := range results {
		out[at[j]], errs[at[j]] = l.renewed(ctx, todo[j], sent, err)
	}
	return out, errs
}

// ManyRenewer is a Locker that renews many leases in one call: a
// PortableLocker (see RenewMany), or a wrapper of one that passes the
// call on. A Session's keepalive uses it when its Locker is one, and
// RenewEach otherwise.
type ManyRenewer interface {
	RenewMany(ctx context.Context, leases []Lease) ([]Lease, []error)
}

// RenewEach renews leases with one l.Renew call each, in order, and
// returns the renewed leases and one error per lease, as RenewMany does.
// It is what RenewMany does on a driver that is not a BatchRenewer, and
// what a wrapper's RenewMany can do over a Locker that is not a
// ManyRenewer.
func RenewEach(ctx context.Context, l Locker, leases []Lease) ([]Lease, []error) {
	out, errs := make([]Lease, len(leases)), make([]error, len(leases))
	for i, lease := range leases {
		out[i], errs[i] = l.Renew(ctx, lease)
	}
	return out, errs
}

// NotifyRelease returns a channel that receives a value each time key may
// have been released or broken, when the driver is a ReleaseNotifier (see
// there); otherwise it returns an error matching errors.ErrUnsupported.
// Session.Lock uses it to wake on release instead of polling.
func (l *PortableLocker) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	n, ok := l.d.(ReleaseNotifier)
	if !ok {
		return nil, nil, &OpError{Backend: l.info.Name, Op: "notify", Key: key, Err: errors.ErrUnsupported}
	}
	if err := l.checkKey(key); err != nil {
		return nil, nil, l.fail(ctx, "notify", key, err)
	}
	c, stop, err := n.NotifyRelease(ctx, key)
	if err != nil {
		return nil, nil, l.fail(ctx, "notify", key, err)
	}
	return c, stop, nil
}

// Release implements Locker. A lease whose latest renewal ran out on l's
// Clock is refused with a *NotHeldError without asking the store.
func (l *PortableLocker) Release(ctx context.Context, lease Lease) error {
	if err := l.checkLease(lease); err != nil {
		return l.fail(ctx, "release", lease.Key, err)
	}
	if err := ctx.Err(); err != nil {
		return l.fail(ctx, "release", lease.Key, err)
	}
	if err := l.ranOut(&lease, l.clock.Now()); err != nil {
		return l.fail(ctx, "release", lease.Key, err)
	}
	err := l.d.Release(ctx, lease)
	if err == nil || errors.Is(err, ErrNotHeld) {
		l.leases.forget(lease)
	}
	if err != nil {
		return l.fail(ctx, "release", lease.Key, err)
	}
	return nil
}

// Break implements Locker.
func (l *PortableLocker) Break(ctx context.Context, key string) error {
	if err := l.checkKey(key); err != nil {
		return l.fail(ctx, "break", key, err)
	}
	if err := ctx.Err(); err != nil {
		return l.fail(ctx, "break", key, err)
	}
	if err := l.d.Break(ctx, key); err != nil {
		return l.fail(ctx, "break", key, err)
	}
	return nil
}

// Inspect implements Locker.
func (l *PortableLocker) Inspect(ctx context.Context, key string) (LockInfo, error) {
	if err := l.checkKey(key); err != nil {
		return LockInfo{}, l.fail(ctx, "inspect", key, err)
	}
	if err := ctx.Err(); err != nil {
		return LockInfo{}, l.fail(ctx, "inspect", key, err)
	}
	info, err := l.d.Inspect(ctx, key)
	if err != nil {
		return LockInfo{}, l.fail(ctx, "inspect", key, err)
	}
	info.Key = key
	if (info.Owner == "") != (info.Token == 0) {
		return LockInfo{}, l.fail(ctx, "inspect", key, &CorruptError{Key: key, Reason: fmt.Sprintf("%s with token %d: an owner goes with a token", orNobody(OwnerFingerprint(info.Owner)), info.Token)})
	}
	if !info.Held {
		info.ValidUntil = time.Time{}
	}
	return info, nil
}

// Create creates what the backend keeps its records in (a table, a
// container, a bucket) if it is missing, where the backend or the URL
// opener knows how; otherwise it returns an error matching
// errors.ErrUnsupported. What exists already is left as it is, and
// replicas starting together may all call it at once: each succeeds.
func (l *PortableLocker) Create(ctx context.Context) error {
	create := l.create
	if create == nil {
		if c, ok := l.d.(interface{ Create(context.Context) error }); ok {
			create = c.Create
		}
	}
	if create == nil {
		return &OpError{Backend: l.info.Name, Op: "create", Err: errors.ErrUnsupported}
	}
	if err := create(ctx); err != nil {
		return l.fail(ctx, "create", "", err)
	}
	return nil
}

// Close releases the clients an opener made for l (OpenLocker); for a
// PortableLocker built over clients of the caller's, it does nothing and
// the caller closes them.
func (l *PortableLocker) Close() error {
	if l.close != nil {
		return l.close()
	}
	return nil
}

func (l *PortableLocker) checkKey(key string) error {
	return ValidateKey("key", key, l.info.MaxKeyLen)
}

func (l *PortableLocker) checkLease(lease Lease) error {
	if err := ValidateLease(lease, l.info.MaxKeyLen); err != nil {
		return err
	}
	return ValidateKey("owner", lease.Owner, l.info.MaxOwnerLen)
}

// ranOut sets lease.ValidUntil to the latest one l gave it and returns a
// *NotHeldError when that has passed at now.
func (l *PortableLocker) ranOut(lease *Lease, now time.Time) error {
	lease.ValidUntil = l.leases.validUntil(*lease)
	if now.Before(lease.ValidUntil) {
		return nil
	}
	l.leases.forget(*lease)
	if lease.ValidUntil.IsZero() {
		return &NotHeldError{Key: lease.Key, Reason: "the lease has no expiry and was not given out by this locker"}
	}
	return &NotHeldError{Key: lease.Key, Reason: "its latest renewal ran out at " + lease.ValidUntil.UTC().Format(time.RFC3339Nano) + " on this process's clock"}
}

// fail wraps err in an *OpError, joined with ctx's error when ctx ended and
// err does not say so already.
func (l *PortableLocker) fail(ctx context.Context, op, key string, err error) error {
	return wrapOp(ctx, l.info.Name, op, key, err)
}

func wrapOp(ctx context.Context, backend, op, key string, err error) error {
	if cerr := ended(ctx); cerr != nil && !errors.Is(err, cerr) {
		err = &ctxError{err: err, ctx: cerr}
	}
	return &OpError{Backend: backend, Op: op, Key: key, Err: err}
}

// ended returns ctx.Err(), or context.DeadlineExceeded when ctx's deadline
// has passed but its timer has not yet marked it done: a client that sets
// its connection's deadline to ctx's (go-redis, the SQL drivers) fails
// with a network timeout at that very instant, a moment before ctx.Err()
// says so, and the error must still match the context's.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// ctxError is an error that happened while ctx ended: it matches both.
type ctxError struct{ err, ctx error }

func (e *ctxError) Error() string   { return e.err.Error() + " (" + e.ctx.Error() + ")" }
func (e *ctxError) Unwrap() []error { return []error{e.err, e.ctx} }

// OpError is how every error of a PortableLocker or PortableResource
// reads: the backend, the operation and the key, then the cause, which it
// wraps (errors.Is and errors.As see through it).
type OpError struct {
	// Backend is the driver's name: "postgres", "dynamo", ...
	Backend string
	// Op is the operation: "acquire", "renew", "release", "break",
	// "inspect", "create", or a resource's "put", "get", "delete",
	// "highest".
	Op string
	// Key is the lock key or resource key; empty for Create.
	Key string
	// Err is the cause.
	Err error
}

func (e *OpError) Error() string {
	msg := "fence/" + e.Backend + ": " + e.Op
	if e.Key != "" {
		msg += " " + strconv.Quote(e.Key)
	}
	if k, ok := e.Err.(keyed); ok && e.Key != "" {
		return msg + ": " + k.detail()
	}
	return msg + ": " + strings.TrimPrefix(e.Err.Error(), "fence: ")
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// NotHeldError reports a Renew or Release of a lease that is no longer
// held, and why where known. It matches ErrNotHeld.
type NotHeldError struct {
	Key string
	// Reason says why, in words: "released or taken over", "its latest
	// renewal ran out ... on this process's clock", ...
	Reason string
}

func (e *NotHeldError) Error() string {
	msg := fmt.Sprintf("fence: lease on %q not held", e.Key)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

func (e *NotHeldError) detail() string {
	if e.Reason == "" {
		return "lease not held"
	}
	return "lease not held: " + e.Reason
}

// keyed is an error of this package that names its key; detail is its
// message without the key, for an OpError that names it already.
type keyed interface {
	error
	detail() string
}

// Is makes errors.Is(err, ErrNotHeld) true.
func (e *NotHeldError) Is(target error) bool { return target == ErrNotHeld }
