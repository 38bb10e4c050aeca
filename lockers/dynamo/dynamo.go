package dynamo

import (
	"fmt"
	"regexp"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clockfree"
	"github.com/fencekit/fence/driver"
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
	MaxClockSkew = clockfree.MaxClockSkew
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
	// saw, under the table's name. Lockers of one process on one table
	// should share one, so that what one saw counts for all; they must
	// then share a Clock too. Default: a new clockfree.Observations for
	// this Locker alone.
	Observations *clockfree.Observations
	// TrustedClock selects trusted-clock expiry (see the package doc).
	// Default: false, clock-free expiry.
	TrustedClock bool
	// MaxClockSkew is how far apart the wall clocks of the machines using
	// the table may be, in trusted-clock mode only; an expired lease is
	// taken over this long after its stored expiry. 0 to MaxClockSkew.
	// Default: 0.
	MaxClockSkew time.Duration
}

// Locker is a fence.Locker on a DynamoDB table: the fence.Locker
// over this package's store, with the methods specific to DynamoDB.
// Create it with New; it is safe for concurrent use.
type Locker struct {
	*fence.Locker
	d *store
}

var _ fence.Locker = (*Locker)(nil)

// store is the driver.Locker on one table.
type store struct {
	api     DynamoDBAPI
	table   string
	keyAttr string
	clock   fence.Clock
	obs     *clockfree.Observations
	mode    clockfree.Mode
}

var _ driver.Locker = (*store)(nil)

// tableName is DynamoDB's rule for table names.
var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// New returns a Locker on table through api (a *dynamodb.Client). It
// checks its arguments but does not call DynamoDB; create the table with
// CreateTable, Locker.Create or your own tools (see KeySchema).
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
	mode := clockfree.Mode{TrustedClock: o.TrustedClock, MaxClockSkew: o.MaxClockSkew}
	if err := mode.Check(); err != nil {
		return nil, err
	}
	if o.Observations == nil {
		o.Observations = clockfree.NewObservations()
	}
	d := &store{
		api:     api,
		table:   table,
		keyAttr: o.KeyAttribute,
		clock:   driver.ClockOrSystem(o.Clock),
		obs:     o.Observations,
		mode:    mode,
	}
	p, err := driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
	if err != nil {
		return nil, err
	}
	return &Locker{PortableLocker: p, d: d}, nil
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "dynamo", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: !d.mode.TrustedClock}
}

// Table returns the name of the lease table.
func (l *Locker) Table() string { return l.d.table }

func checkTable(table string) error {
	if !tableName.MatchString(table) {
		return &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q is not a DynamoDB table name (3 to 255 of a-z, A-Z, 0-9, '_', '-', '.')", table)}
	}
	return nil
}

func checkKeyAttribute(name string) error {
	if err := driver.ValidateKey("KeyAttribute", name, 255); err != nil {
		return err
	}
	for _, a := range itemAttributes {
		if name == a {
			return &fence.InvalidError{Field: "KeyAttribute", Reason: fmt.Sprintf("%q is an attribute the locker writes", name)}
		}
	}
	return nil
}
