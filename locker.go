package fence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence/internal/hook"
)

// lockerDriver is driver.Locker without Info, which driver.NewLocker
// reads and hands over in a hook.LockerSpec.
type lockerDriver interface {
	Acquire(ctx context.Context, key, owner string, ttl time.Duration) (Lease, error)
	Renew(ctx context.Context, lease Lease) error
	Release(ctx context.Context, lease Lease) error
	Break(ctx context.Context, key string) error
	Inspect(ctx context.Context, key string) (LockInfo, error)
}

// defaultMaxOwnerLen is driver.DefaultMaxOwnerLen.
const defaultMaxOwnerLen = 1024

// Locker issues leases with fencing tokens from one store. Get one from a
// backend's constructor (postgres.New, dynamo.New, memory.New, ...) or
// from OpenLocker; every backend returns this one type, and it does once,
// for every backend, what the contract asks beyond the store: it
// validates keys, TTLs and leases, generates owner ids, sets
// Lease.ValidUntil from the send time of each request on its Clock, checks
// what the store returns (a token 0 is a *CorruptError), and reads every
// error as "fence/<backend>: <op> <key>: <cause>" (an *OpError).
//
// Most programs take their locks through a Session (NewSession), which
// renews them and tells the work when a lease is lost. The lease-level
// methods below (Acquire, Renew, Release) are for programs that keep
// their own leases; Break and Inspect are operator actions.
//
// When a method returns an error, its other results are zero values. All
// methods honour ctx: when ctx is done before the store answers, the
// method returns an error wrapping ctx.Err(). Such an error is ambiguous:
// the store may have applied the request. Callers reconcile with Inspect
// or an idempotent retry; they never assume the request did not happen.
//
// A Locker is safe for concurrent use.
type Locker struct {
	d      lockerDriver
	spec   hook.LockerSpec
	clock  Clock
	leases *book
	lines  lines

	// the driver's optional capabilities, found once
	renewBatch func(ctx context.Context, leases []Lease) []error
	notify     func(ctx context.Context, key string) (<-chan struct{}, func(), error)
	publish    func(ctx context.Context, lease Lease, value string) error
	multi      func(ctx context.Context, keys, owners []string, ttl time.Duration) ([]Lease, error)
	create     func(ctx context.Context) error
	as         func(target any) bool

	obs atomic.Pointer[Observer]
}

// newLocker builds the Locker of a driver.NewLocker call.
func newLocker(s hook.LockerSpec) (*Locker, error) {
	d, ok := s.Driver.(lockerDriver)
	if !ok || s.Driver == nil {
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%T is not a driver.Locker", s.Driver)}
	}
	if s.MaxOwnerLen == 0 {
		s.MaxOwnerLen = defaultMaxOwnerLen
	}
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, " :\"/"):
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("name %q is empty or has a space, colon, quote or slash", s.Name)}
	case s.MaxKeyLen < 1 || s.MaxOwnerLen < 1:
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%s: key and owner limits %d and %d must be at least 1", s.Name, s.MaxKeyLen, s.MaxOwnerLen)}
	case s.MinTTL <= 0 || s.MaxTTL < s.MinTTL:
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%s: TTL range %v to %v is empty or not positive", s.Name, s.MinTTL, s.MaxTTL)}
	case s.MinRenewInterval < 0:
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%s: MinRenewInterval %v is negative", s.Name, s.MinRenewInterval)}
	}
	clock, _ := s.Clock.(Clock)
	l := &Locker{d: d, spec: s, clock: clockOr(clock), leases: new(book), create: s.Create}
	if b, ok := d.(interface {
		RenewBatch(ctx context.Context, leases []Lease) []error
	}); ok {
		l.renewBatch = b.RenewBatch
	}
	if n, ok := d.(interface {
		NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error)
	}); ok {
		l.notify = n.NotifyRelease
	}
	if p, ok := d.(interface {
		Publish(ctx context.Context, lease Lease, value string) error
	}); ok {
		l.publish = p.Publish
	}
	if m, ok := d.(interface {
		AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]Lease, error)
	}); ok {
		l.multi = m.AcquireAll
	}
	if l.create == nil {
		if c, ok := d.(interface{ Create(context.Context) error }); ok {
			l.create = c.Create
		}
	}
	if a, ok := d.(interface{ As(any) bool }); ok {
		l.as = a.As
	}
	return l, nil
}

// Name returns the backend's name, as errors show it ("postgres").
func (l *Locker) Name() string { return l.spec.Name }

// As sets target to a backend-specific value under l, if the backend has
// one of target's type, and reports whether it did: the escape hatch to
// the store's own client. Each backend's package lists what As gives.
func (l *Locker) As(target any) bool { return l.as != nil && l.as(target) }

// SetObserver makes o receive the events of l's store calls (Observer.Call)
// and of every Session over l. A nil o stops them. Set it before use; it
// is safe to call concurrently with l's other methods.
func (l *Locker) SetObserver(o *Observer) { l.obs.Store(o) }

// Acquire tries once to take key for ttl and never waits for the lock.
// When another owner holds an unexpired lease it returns an error that
// matches ErrHeld (a *HeldError with the holder and expiry where known);
// so does an Acquire by the owner that already holds the key. An empty or
// over-long key, or a ttl outside the backend's range, gets an error
// matching ErrInvalid. Acquire is one atomic conditional operation in the
// store, never a check followed by a write. opts may be nil.
//
// Nothing renews the lease: a Session does (see Session.Lock).
func (l *Locker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *AcquireOptions) (Lease, error) {
	var owner string
	if opts != nil {
		owner = opts.Owner
	}
	if !l.observed() {
		return l.acquire(ctx, key, ttl, owner, time.Time{}, true)
	}
	ctx, end := l.observe(ctx, "acquire", key, 0)
	lease, err := l.acquire(ctx, key, ttl, owner, time.Time{}, true)
	end(lease.Token, err)
	return lease, err
}

// acquireAt is Acquire for a Session, for owner. sent, when not zero, is
// time.Now() read before the call, given by a Session whose Locker runs
// on the system clock, so that the call needs no reading of its own.
//
// The lease is not entered in l's book: the session keeps its latest
// ValidUntil in the handle, and the book learns it from the first
// renewal (Renew records it); until then every copy of the lease has the
// ValidUntil of the acquisition, which is all the book would say.
func (l *Locker) acquireAt(ctx context.Context, key string, ttl time.Duration, owner string, sent time.Time) (Lease, error) {
	if !l.observed() {
		return l.acquire(ctx, key, ttl, owner, sent, false)
	}
	ctx, end := l.observe(ctx, "acquire", key, 0)
	lease, err := l.acquire(ctx, key, ttl, owner, sent, false)
	end(lease.Token, err)
	return lease, err
}

// acquire is Acquire; owner is a new owner id when empty, sent is as for
// acquireAt, and record enters the lease in the book.
func (l *Locker) acquire(ctx context.Context, key string, ttl time.Duration, owner string, sent time.Time, record bool) (Lease, error) {
	if err := l.checkKey(key); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	if err := validateTTL(ttl, l.spec.MinTTL, l.spec.MaxTTL); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	if owner == "" {
		owner = NewOwnerID()
	}
	if err := validateKey("owner", owner, l.spec.MaxOwnerLen); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	if err := ctxErr(ctx, sent); err != nil {
		return Lease{}, l.fail(ctx, "acquire", key, err)
	}
	if sent.IsZero() {
		sent = l.clock.Now()
	}
	lease, err := l.d.Acquire(ctx, key, owner, ttl)
	if errors.Is(err, hook.ErrAcquireRaced) {
		if lease, err = l.d.Acquire(ctx, key, owner, ttl); errors.Is(err, hook.ErrAcquireRaced) {
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
	if record {
		l.leases.record(lease, sent)
	}
	return lease, nil
}

// acquireAllAt takes every key of sorted (distinct, sorted, checked) for
// the owner at the same index, all or nothing, in one call of a
// MultiAcquirer driver, for a Session; sent is as for acquireAt, or zero.
func (l *Locker) acquireAllAt(ctx context.Context, sorted, owners []string, ttl time.Duration, sent time.Time) ([]Lease, error) {
	if !l.observed() {
		return l.acquireAll(ctx, sorted, owners, ttl, sent)
	}
	ctx, end := l.observe(ctx, "acquire_all", sorted[0], 0)
	leases, err := l.acquireAll(ctx, sorted, owners, ttl, sent)
	var t Token
	if len(leases) > 0 {
		t = leases[0].Token
	}
	end(t, err)
	return leases, err
}

func (l *Locker) acquireAll(ctx context.Context, sorted, owners []string, ttl time.Duration, sent time.Time) ([]Lease, error) {
	key := sorted[0]
	if err := validateTTL(ttl, l.spec.MinTTL, l.spec.MaxTTL); err != nil {
		return nil, l.fail(ctx, "acquire", key, err)
	}
	if err := ctxErr(ctx, sent); err != nil {
		return nil, l.fail(ctx, "acquire", key, err)
	}
	if sent.IsZero() {
		sent = l.clock.Now()
	}
	leases, err := l.multi(ctx, sorted, owners, ttl)
	if errors.Is(err, hook.ErrAcquireRaced) {
		if leases, err = l.multi(ctx, sorted, owners, ttl); errors.Is(err, hook.ErrAcquireRaced) {
			err = &HeldError{Key: key}
		}
	}
	if err != nil {
		if he, ok := errors.AsType[*HeldError](err); ok {
			key = he.Key
		}
		return nil, l.fail(ctx, "acquire", key, err)
	}
	if len(leases) != len(sorted) {
		return nil, l.fail(ctx, "acquire", key, fmt.Errorf("driver returned %d leases for %d keys", len(leases), len(sorted)))
	}
	for i := range leases {
		lease := &leases[i]
		switch {
		case !lease.Token.Valid():
			return nil, l.fail(ctx, "acquire", sorted[i], &CorruptError{Key: sorted[i], Reason: "the store issued token 0"})
		case lease.Key != sorted[i] || lease.Owner != owners[i]:
			return nil, l.fail(ctx, "acquire", sorted[i], fmt.Errorf("driver returned a lease on %q for %s, not for the key and owner asked", lease.Key, orNobody(OwnerFingerprint(lease.Owner))))
		}
		lease.TTL = ttl
		if limit := sent.Add(ttl); lease.ValidUntil.IsZero() || lease.ValidUntil.After(limit) {
			lease.ValidUntil = limit
		}
	}
	return leases, nil
}

// Renew extends lease by its TTL, keeping its token. It succeeds only if
// the caller still holds the lease: if the lease expired, was released,
// broken or taken over, Renew returns an error matching ErrNotHeld.
// Renewing the same lease twice is harmless, and so is renewing with an
// older copy of it (see Lease): the lease is expired only when its latest
// renewal has run out. A lease whose latest renewal ran out on l's Clock
// is refused with a *NotHeldError without asking the store. A lease whose
// TTL is outside the backend's range gets an error matching ErrInvalid.
func (l *Locker) Renew(ctx context.Context, lease Lease) (Lease, error) {
	if !l.observed() {
		return l.renew(ctx, lease)
	}
	ctx, end := l.observe(ctx, "renew", lease.Key, lease.Token)
	out, err := l.renew(ctx, lease)
	end(lease.Token, err)
	return out, err
}

func (l *Locker) renew(ctx context.Context, lease Lease) (Lease, error) {
	if err := l.renewable(ctx, lease); err != nil {
		return Lease{}, l.fail(ctx, "renew", lease.Key, err)
	}
	sent := l.clock.Now()
	if err := l.ranOut(&lease, sent); err != nil {
		return Lease{}, l.fail(ctx, "renew", lease.Key, err)
	}
	return l.renewed(ctx, lease, sent, l.d.Renew(ctx, lease))
}

// renewable checks a lease given to Renew or renewMany, and ctx.
func (l *Locker) renewable(ctx context.Context, lease Lease) error {
	if err := l.checkLease(lease); err != nil {
		return err
	}
	if err := validateTTL(lease.TTL, l.spec.MinTTL, l.spec.MaxTTL); err != nil {
		return err
	}
	return ctx.Err()
}

// renewed settles the driver's answer err to the renewal of lease sent at
// sent: the renewed lease, or the wrapped error (forgetting a lease no
// longer held).
func (l *Locker) renewed(ctx context.Context, lease Lease, sent time.Time, err error) (Lease, error) {
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

// renewMany renews every lease of leases as Renew would, and returns the
// renewed leases and one error per lease, in order: with one call to a
// driver that renews in batches (RenewBatch), and one Renew per lease
// otherwise, renewConcurrency of them at once. Each call has timeout, and
// ends with ctx. A Session's keepalive calls it once per round.
func (l *Locker) renewMany(ctx context.Context, leases []Lease, timeout time.Duration) ([]Lease, []error) {
	out, errs := make([]Lease, len(leases)), make([]error, len(leases))
	if l.renewBatch == nil {
		each(ctx, len(leases), timeout, func(ctx context.Context, i int) {
			out[i], errs[i] = l.Renew(ctx, leases[i])
		})
		return out, errs
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	todo, at := make([]Lease, 0, len(leases)), make([]int, 0, len(leases))
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
	var ends []func(Token, error)
	if l.observed() {
		ends = make([]func(Token, error), len(todo))
		for j, lease := range todo {
			_, ends[j] = l.observe(ctx, "renew", lease.Key, lease.Token)
		}
	}
	results := l.renewBatch(ctx, todo)
	if len(results) != len(todo) {
		err := fmt.Errorf("driver answered %d renewals for %d leases", len(results), len(todo))
		for j, i := range at {
			errs[i] = l.fail(ctx, "renew", leases[i].Key, err)
			if ends != nil {
				ends[j](leases[i].Token, errs[i])
			}
		}
		return out, errs
	}
	for j, err := range results {
		out[at[j]], errs[at[j]] = l.renewed(ctx, todo[j], sent, err)
		if ends != nil {
			ends[j](todo[j].Token, errs[at[j]])
		}
	}
	return out, errs
}

// notifyRelease returns a channel that receives a value each time key
// may have been released or broken, when the driver sends such news (see
// driver.ReleaseNotifier); otherwise it returns an error matching
// errors.ErrUnsupported. Session.Lock uses it to wake on release instead
// of polling.
func (l *Locker) notifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if l.notify == nil {
		return nil, nil, &OpError{Backend: l.spec.Name, Op: "notify", Key: key, Err: errors.ErrUnsupported}
	}
	if err := l.checkKey(key); err != nil {
		return nil, nil, l.fail(ctx, "notify", key, err)
	}
	c, stop, err := l.notify(ctx, key)
	if err != nil {
		return nil, nil, l.fail(ctx, "notify", key, err)
	}
	return c, stop, nil
}

// Release frees lease if and only if the caller still holds it
// (compare-and-delete on owner and token, never a blind delete), with any
// copy of it (see Lease). It returns an error matching ErrNotHeld when the
// lease was no longer held (a lease whose latest renewal ran out on l's
// Clock is refused so without asking the store); the new holder's lease is
// then left in place. The record and its counter stay in the store so the
// next token continues the sequence.
func (l *Locker) Release(ctx context.Context, lease Lease) error {
	if !l.observed() {
		return l.release(ctx, lease, time.Time{}, false)
	}
	ctx, end := l.observe(ctx, "release", lease.Key, lease.Token)
	err := l.release(ctx, lease, time.Time{}, false)
	end(lease.Token, err)
	return err
}

// releaseAt is Release for a Session, of a lease that l gave out (so its
// key, owner, token and TTL need no check); now, when not zero, is
// time.Now() read before the call, as for acquireAt.
func (l *Locker) releaseAt(ctx context.Context, lease Lease, now time.Time) error {
	if !l.observed() {
		return l.release(ctx, lease, now, true)
	}
	ctx, end := l.observe(ctx, "release", lease.Key, lease.Token)
	err := l.release(ctx, lease, now, true)
	end(lease.Token, err)
	return err
}

func (l *Locker) release(ctx context.Context, lease Lease, now time.Time, ours bool) error {
	if !ours {
		if err := l.checkLease(lease); err != nil {
			return l.fail(ctx, "release", lease.Key, err)
		}
	}
	if err := ctxErr(ctx, now); err != nil {
		return l.fail(ctx, "release", lease.Key, err)
	}
	if now.IsZero() {
		now = l.clock.Now()
	}
	if err := l.ranOut(&lease, now); err != nil {
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

// Break frees key whoever holds it: an operator action. The next
// successful Acquire returns a token greater than the broken holder's.
// Breaking a free or unknown key is not an error.
func (l *Locker) Break(ctx context.Context, key string) error {
	if !l.observed() {
		return l.breakKey(ctx, key)
	}
	ctx, end := l.observe(ctx, "break", key, 0)
	err := l.breakKey(ctx, key)
	end(0, err)
	return err
}

func (l *Locker) breakKey(ctx context.Context, key string) error {
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

// Inspect describes key without taking it.
func (l *Locker) Inspect(ctx context.Context, key string) (LockInfo, error) {
	if !l.observed() {
		return l.inspect(ctx, key)
	}
	ctx, end := l.observe(ctx, "inspect", key, 0)
	info, err := l.inspect(ctx, key)
	end(info.Token, err)
	return info, err
}

func (l *Locker) inspect(ctx context.Context, key string) (LockInfo, error) {
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
	if !info.Held {
		info.Value = ""
	}
	return info, nil
}

// Publish sets the public value of lease, if the caller still holds it
// (compare-and-set on owner and token): anyone can read it with Inspect
// (LockInfo.Value) for as long as the lease lives, and it ends with the
// lease. An election's leader publishes its address this way. An empty
// value clears it. It returns an error matching ErrNotHeld when the lease
// is no longer held (or its latest renewal ran out on l's Clock), one
// matching ErrInvalid for a value longer than MaxValueLen, and one
// matching errors.ErrUnsupported when the backend keeps no values (every
// backend of this module does). Publishing also wakes whoever waits on
// the key where the store notifies (see Session.Lock), so followers that
// watch a key see the value at once.
func (l *Locker) Publish(ctx context.Context, lease Lease, value string) error {
	if !l.observed() {
		return l.publishValue(ctx, lease, value)
	}
	ctx, end := l.observe(ctx, "publish", lease.Key, lease.Token)
	err := l.publishValue(ctx, lease, value)
	end(lease.Token, err)
	return err
}

func (l *Locker) publishValue(ctx context.Context, lease Lease, value string) error {
	if err := l.checkLease(lease); err != nil {
		return l.fail(ctx, "publish", lease.Key, err)
	}
	if len(value) > MaxValueLen {
		return l.fail(ctx, "publish", lease.Key, &InvalidError{Field: "value", Reason: fmt.Sprintf("%d bytes exceed MaxValueLen (%d)", len(value), MaxValueLen)})
	}
	if l.publish == nil {
		return l.fail(ctx, "publish", lease.Key, errors.ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return l.fail(ctx, "publish", lease.Key, err)
	}
	if err := l.ranOut(&lease, l.clock.Now()); err != nil {
		return l.fail(ctx, "publish", lease.Key, err)
	}
	if err := l.publish(ctx, lease, value); err != nil {
		return l.fail(ctx, "publish", lease.Key, err)
	}
	return nil
}

// Create creates what the backend keeps its records in (a table, a
// container, a bucket) if it is missing, where the backend or the URL
// opener knows how; otherwise it returns an error matching
// errors.ErrUnsupported. What exists already is left as it is, and
// replicas starting together may all call it at once: each succeeds.
func (l *Locker) Create(ctx context.Context) error {
	create := l.create
	if create == nil {
		return &OpError{Backend: l.spec.Name, Op: "create", Err: errors.ErrUnsupported}
	}
	if err := create(ctx); err != nil {
		return l.fail(ctx, "create", "", err)
	}
	return nil
}

// Close releases the clients an opener made for l (OpenLocker); for a
// Locker built over clients of the caller's (a backend's New), it does
// nothing and the caller closes them.
func (l *Locker) Close() error {
	if l.spec.Close != nil {
		return l.spec.Close()
	}
	return nil
}

// observed reports whether l's Observer watches its calls.
func (l *Locker) observed() bool {
	o := l.obs.Load()
	return o != nil && o.Call != nil
}

// observe starts the observation of one store call, when l's Observer
// has a Call function.
func (l *Locker) observe(ctx context.Context, op, key string, t Token) (context.Context, func(Token, error)) {
	return observeCall(ctx, l.obs.Load(), Call{Backend: l.spec.Name, Op: op, Key: key, Token: t})
}

func (l *Locker) checkKey(key string) error {
	return validateKey("key", key, l.spec.MaxKeyLen)
}

func (l *Locker) checkLease(lease Lease) error {
	if err := validateLease(lease, l.spec.MaxKeyLen); err != nil {
		return err
	}
	return validateKey("owner", lease.Owner, l.spec.MaxOwnerLen)
}

// ranOut sets lease.ValidUntil to the latest one l gave it and returns a
// *NotHeldError when that has passed at now.
func (l *Locker) ranOut(lease *Lease, now time.Time) error {
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
func (l *Locker) fail(ctx context.Context, op, key string, err error) error {
	return wrapOp(ctx, l.spec.Name, op, key, err)
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

// OpError is how every error of a Locker or Resource
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
