// Package dynamo is a fence.Locker on Amazon DynamoDB, driven through the
// AWS SDK for Go v2.
//
// Each key is one item of a lease table whose partition key is a string
// attribute (see CreateTable and KeySchema). The item holds the owner of
// the last lease, the fencing token (a number that only grows), a record
// version that changes on every write, the lease duration and whether the
// key is held. Items are never deleted: Release and Break mark the item
// free and keep the token, so the next token continues the sequence. Do not
// delete items by hand; that restarts a key's tokens at 1.
//
// Every write is one conditional UpdateItem. Acquire sets the owner and a
// new version and increments the token with ADD in the same update, on the
// condition that the item is absent, free, or expired (below); a failed
// Acquire writes nothing and reads the item once to report the holder.
// Renew and Release are conditional on the owner and token of the lease
// (the pair names one acquisition: every Acquire increments the token), and
// write a new version too. Nothing uses transactions. Each method is one
// request; a failed Acquire is two on stores that do not return the item
// with a failed condition (ReturnValuesOnConditionCheckFailure).
//
// An item someone edited by hand so that it breaks these rules (a token
// that is not a whole number from 1 to 2^64-1, a missing or mistyped
// attribute) gets an error matching fence.ErrCorrupt from every method that
// reads it. Acquire's condition requires a numeric token from 1 to one
// below the largest, so it never increments a broken one; the one
// exception is a fractional token, which no condition can detect: Acquire
// then increments it and reports the item corrupt. Break does not read the
// item and frees it whatever it holds.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Who measures expiry
//
// DynamoDB has no clock that a condition can read, so a Locker decides
// when another owner's lease has expired. There are two ways, chosen with
// Options.TrustedClock.
//
// Clock-free (the default, as in Amazon's DynamoDB lock client): a Locker
// may take a key over only after it has itself seen the same record
// version, unchanged, for a full lease duration measured on its own
// monotonic clock. Clock skew between machines does not matter, only clock
// rates do. Acquire still tries once and never waits: the Locker remembers
// what it saw (see Observations), so an Acquire (or Inspect) now starts the
// wait and a later Acquire can take the key over. A process that starts
// afresh, or a Locker that never looked at a key, waits a full lease from
// its first look, even if the holder died long ago. Every Renew writes a new
// version, so observers restart their wait; a holder that keeps renewing
// keeps the key. Lockers of one process should share one Observations.
//
// Trusted clock: each write also stores an expiry, the writer's wall clock
// plus the TTL, and a Locker takes a key over once that expiry plus
// Options.MaxClockSkew has passed on its own wall clock. A takeover can
// come right away, without a previous look, but its safety rests on every
// machine's wall clock staying within MaxClockSkew of the others.
//
// The trade-off: clock-free takeovers are late (a full lease after the
// first look, so up to two leases after the holder's last write, and
// again after a restart of the contender) but need no agreement between
// clocks; trusted-clock takeovers come on time, but a clock off by more
// than MaxClockSkew lets two owners hold the key at once. In either case
// the tokens still increase, and a fenced resource refuses the older
// holder's writes.
//
// In both modes a holder counts its lease from the time it sent the
// request, on its own clock (Lease.ValidUntil). Renew and Release accept
// any copy of a lease (the one from Acquire or from any Renew): they judge
// it by the latest ValidUntil this Locker gave it, and once that has passed
// they fail with fence.ErrNotHeld without writing. Do not mix the modes on
// one table.
//
// # Ambiguous outcomes
//
// Every write carries a fresh random version. When a write fails in a way
// that leaves its outcome unknown (the SDK retried after a lost response
// and the retry's condition failed, or the request failed in transit), the
// Locker reads the item back with a consistent read: if the item carries
// its version, the write was applied and the method succeeds. Otherwise the
// error is returned; it may still be ambiguous (a request can be applied
// after the read), as the fence.Locker contract says. When ctx ends first,
// nothing is read back.
package dynamo

import (
	"fmt"
	"regexp"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/leases"
)

// Limits of the DynamoDB locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8: DynamoDB's
	// limit for a partition key.
	MaxKeyLen = 2048
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinTTL and MaxTTL bound the lease duration. The store keeps it in
	// whole milliseconds, rounded up. Below a second, DynamoDB's tail
	// latency and the SDK's retries would eat much of a clock-free lease.
	MinTTL = time.Second
	MaxTTL = 24 * time.Hour
	// MaxClockSkew bounds Options.MaxClockSkew.
	MaxClockSkew = time.Hour
	// DefaultKeyAttribute is the partition key attribute used when
	// Options.KeyAttribute is empty.
	DefaultKeyAttribute = "key"
)

// Options configure a Locker. A nil *Options means all defaults.
type Options struct {
	// KeyAttribute names the table's partition key attribute, of type S.
	// It may not be one of the attributes the Locker writes (see
	// KeySchema). Default: DefaultKeyAttribute.
	KeyAttribute string
	// Clock times leases and, in clock-free mode, how long a record
	// version has been seen unchanged; in trusted-clock mode its wall
	// reading also computes stored expiries. Default: fence.SystemClock.
	Clock fence.Clock
	// Observations is where a clock-free Locker remembers the versions it
	// saw. Lockers of one process on one table should share one, so that
	// what one saw counts for all; they must then share a Clock too.
	// Default: a new Observations for this Locker alone.
	Observations *Observations
	// TrustedClock selects trusted-clock expiry (see the package doc).
	// Default: false, clock-free expiry.
	TrustedClock bool
	// MaxClockSkew is how far apart the wall clocks of the machines using
	// the table may be, in trusted-clock mode only; an expired lease is
	// taken over this long after its stored expiry. 0 to MaxClockSkew.
	// Default: 0.
	MaxClockSkew time.Duration
}

// Locker is a fence.Locker on a DynamoDB table. Create it with New; it is
// safe for concurrent use.
type Locker struct {
	api     DynamoDBAPI
	table   string
	keyAttr string
	clock   fence.Clock
	obs     *Observations
	trusted bool
	skew    time.Duration
	book    leases.Book // latest ValidUntil of the leases l renewed
}

var _ fence.Locker = (*Locker)(nil)

// tableName is DynamoDB's rule for table names.
var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// New returns a Locker on table through api (a *dynamodb.Client). It
// checks its arguments but does not call DynamoDB; create the table with
// CreateTable or your own tools (see KeySchema).
func New(api DynamoDBAPI, table string, opts *Options) (*Locker, error) {
	if api == nil {
		return nil, &fence.InvalidError{Field: "api", Reason: "nil"}
	}
	if err := checkTable(table); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.KeyAttribute == "" {
		o.KeyAttribute = DefaultKeyAttribute
	}
	if err := checkKeyAttribute(o.KeyAttribute); err != nil {
		return nil, err
	}
	switch {
	case o.MaxClockSkew < 0 || o.MaxClockSkew > MaxClockSkew:
		return nil, &fence.InvalidError{Field: "MaxClockSkew", Reason: fmt.Sprintf("%v is outside the range 0 to %v", o.MaxClockSkew, MaxClockSkew)}
	case o.MaxClockSkew != 0 && !o.TrustedClock:
		return nil, &fence.InvalidError{Field: "MaxClockSkew", Reason: "set without TrustedClock; clock-free expiry ignores wall clocks"}
	}
	if o.Observations == nil {
		o.Observations = NewObservations()
	}
	return &Locker{
		api:     api,
		table:   table,
		keyAttr: o.KeyAttribute,
		clock:   fence.ClockOrSystem(o.Clock),
		obs:     o.Observations,
		trusted: o.TrustedClock,
		skew:    o.MaxClockSkew,
	}, nil
}

// Table returns the name of the lease table.
func (l *Locker) Table() string { return l.table }

func checkTable(table string) error {
	if !tableName.MatchString(table) {
		return &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q is not a DynamoDB table name (3 to 255 of a-z, A-Z, 0-9, '_', '-', '.')", table)}
	}
	return nil
}

func checkKeyAttribute(name string) error {
	if err := fence.ValidateKey("KeyAttribute", name, 255); err != nil {
		return err
	}
	for _, a := range itemAttributes {
		if name == a {
			return &fence.InvalidError{Field: "KeyAttribute", Reason: fmt.Sprintf("%q is an attribute the locker writes", name)}
		}
	}
	return nil
}
