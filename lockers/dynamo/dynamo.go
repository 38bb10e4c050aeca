package dynamo

import (
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
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
	// DefaultKeyAttribute is the partition key attribute used when
	// Options.KeyAttribute is empty.
	DefaultKeyAttribute = "key"
	// DefaultProbeInterval is how often a waited-for key is probed when
	// Options.ProbeInterval is 0 (see the package doc, "Waiting").
	DefaultProbeInterval = probe.DefaultInterval
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// KeyAttribute names the table's partition key attribute, of type S.
	// It may not be one of the attributes the Locker writes (see the
	// package doc, "The stored item"). Default: DefaultKeyAttribute.
	KeyAttribute string
	// Clock times leases and, in clock-free mode, how long a record
	// version has been seen unchanged; in trusted-clock mode its wall
	// reading also computes stored expiries. Default: fence.SystemClock.
	Clock fence.Clock
	// TrustedClock selects trusted-clock expiry (see the package doc).
	// Default: false, clock-free expiry.
	TrustedClock bool
	// MaxClockSkew is how far apart the wall clocks of the machines using
	// the table may be, in trusted-clock mode only; an expired lease is
	// taken over this long after its stored expiry. 0 to an hour.
	// Default: 0.
	MaxClockSkew time.Duration
	// ProbeInterval is how often the item of a key that a Session.Lock
	// of this Locker waits for is read, to wake the waiter when the lease
	// ends (see the package doc, "Waiting"): one strongly consistent
	// read per waited-for key per interval. At least 10 ms; negative
	// turns probes off, and waiters poll at
	// fence.SessionOptions.PollInterval. Default:
	// DefaultProbeInterval.
	ProbeInterval time.Duration
}

// store is the driver.Locker on one table.
type store struct {
	api     DynamoDBAPI
	table   string
	keyAttr string
	clock   fence.Clock
	obs     *clockfree.Observations
	mode    clockfree.Mode
	probe   *probe.Prober // nil with probes off
}

var (
	_ driver.Locker  = (*store)(nil)
	_ driver.Creator = (*store)(nil)
	_ driver.Aser    = (*store)(nil)
)

// tableName is DynamoDB's rule for table names.
var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// New returns a *fence.Locker on table through api (a *dynamodb.Client).
// It checks its arguments but does not call DynamoDB; create the table
// with CreateTable, the Locker's Create (when api is a TableAPI too, as a
// *dynamodb.Client is) or your own tools (see the package doc, "The
// stored item"). Its As gives api (see the package doc).
func New(api DynamoDBAPI, table string, opts *Options) (*fence.Locker, error) {
	d, err := newStore(api, table, opts, nil)
	if err != nil {
		return nil, err
	}
	return driver.NewLocker(d.driver(), &driver.LockerOptions{Clock: d.clock})
}

// newStore checks the arguments of New and returns the store they make,
// remembering what it sees in obs (nil: observations of its own). The
// tests share one obs between the lockers of one process.
func newStore(api DynamoDBAPI, table string, opts *Options, obs *clockfree.Observations) (*store, error) {
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
	every, err := probe.Interval("ProbeInterval", o.ProbeInterval)
	if err != nil {
		return nil, err
	}
	if obs == nil {
		obs = clockfree.NewObservations()
	}
	d := &store{
		api:     api,
		table:   table,
		keyAttr: o.KeyAttribute,
		clock:   driver.ClockOrSystem(o.Clock),
		obs:     obs,
		mode:    mode,
	}
	if every > 0 {
		d.probe = probe.New(every, d.clock, d.probeRead)
	}
	return d, nil
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "dynamo", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: !d.mode.TrustedClock}
}

// As implements driver.Aser: it gives the client given to New (or made
// by the URL opener) to a *DynamoDBAPI, and to a **dynamodb.Client when
// it is one.
func (d *store) As(target any) bool {
	switch p := target.(type) {
	case *DynamoDBAPI:
		*p = d.api
		return true
	case **dynamodb.Client:
		c, ok := d.api.(*dynamodb.Client)
		if ok {
			*p = c
		}
		return ok
	}
	return false
}

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
