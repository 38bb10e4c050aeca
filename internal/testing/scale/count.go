package scale

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// calls counts the driver calls of a Locker.
type calls struct {
	acquire, renew, batch, batched, release, inspect, other atomic.Int64
}

// renewals returns the renewal calls: one per Renew, one per RenewBatch.
func (c *calls) renewals() int64 { return c.renew.Load() + c.batch.Load() }

// leases returns the leases sent to be renewed.
func (c *calls) leases() int64 { return c.renew.Load() + c.batched.Load() }

// all returns every driver call.
func (c *calls) all() int64 {
	return c.acquire.Load() + c.renew.Load() + c.batch.Load() + c.release.Load() + c.inspect.Load() + c.other.Load()
}

// counter is a driver.Locker that counts the calls to the one it wraps.
type counter struct {
	d driver.Locker
	n *calls
}

func (c counter) Info() driver.Info { return c.d.Info() }

func (c counter) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	c.n.acquire.Add(1)
	return c.d.Acquire(ctx, key, owner, ttl)
}

func (c counter) Renew(ctx context.Context, lease fence.Lease) error {
	c.n.renew.Add(1)
	return c.d.Renew(ctx, lease)
}

func (c counter) Release(ctx context.Context, lease fence.Lease) error {
	c.n.release.Add(1)
	return c.d.Release(ctx, lease)
}

func (c counter) Break(ctx context.Context, key string) error {
	c.n.other.Add(1)
	return c.d.Break(ctx, key)
}

func (c counter) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	c.n.inspect.Add(1)
	return c.d.Inspect(ctx, key)
}

// AcquireAll counts as one acquisition, the one call it makes to the
// store; over a driver without it, it answers errors.ErrUnsupported (the
// session then takes the keys one at a time) and counts nothing.
func (c counter) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	m, ok := c.d.(driver.MultiAcquirer)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	c.n.acquire.Add(1)
	return m.AcquireAll(ctx, keys, owners, ttl)
}

// Publish counts as another call; over a driver without it, it answers
// errors.ErrUnsupported and counts nothing.
func (c counter) Publish(ctx context.Context, lease fence.Lease, value string) error {
	p, ok := c.d.(driver.Publisher)
	if !ok {
		return errors.ErrUnsupported
	}
	c.n.other.Add(1)
	return p.Publish(ctx, lease, value)
}

func (c counter) renewBatch(ctx context.Context, leases []fence.Lease) []error {
	c.n.batch.Add(1)
	c.n.batched.Add(int64(len(leases)))
	return c.d.(driver.BatchRenewer).RenewBatch(ctx, leases)
}

func (c counter) notifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	c.n.other.Add(1)
	return c.d.(driver.ReleaseNotifier).NotifyRelease(ctx, key)
}

type counterB struct{ counter }

func (c counterB) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	return c.renewBatch(ctx, leases)
}

type counterN struct{ counter }

func (c counterN) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return c.notifyRelease(ctx, key)
}

type counterBN struct{ counter }

func (c counterBN) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	return c.renewBatch(ctx, leases)
}

func (c counterBN) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return c.notifyRelease(ctx, key)
}

// notNeeded are methods of drivers the counting wrapper leaves out: the
// benchmark creates the store before it wraps the driver, and reaches
// no client through As.
var notNeeded = map[string]bool{"Create": true, "As": true}

// counted returns a Locker over l's driver that counts its calls in n.
// It fails when l's driver has a method the wrapper would hide (a
// capability the portable Locker would then not find): the measurement
// would not be the store's.
func counted(l *fence.Locker, n *calls) (*fence.Locker, error) {
	var hidden []string
	out, err := driver.Wrap(l, func(d driver.Locker) driver.Locker {
		c := counter{d, n}
		_, b := d.(driver.BatchRenewer)
		_, notify := d.(driver.ReleaseNotifier)
		var w driver.Locker
		switch {
		case b && notify:
			w = counterBN{c}
		case b:
			w = counterB{c}
		case notify:
			w = counterN{c}
		default:
			w = c
		}
		wt := reflect.TypeOf(w)
		dt := reflect.TypeOf(d)
		for i := range dt.NumMethod() {
			name := dt.Method(i).Name
			if _, ok := wt.MethodByName(name); !ok && !notNeeded[name] {
				hidden = append(hidden, name)
			}
		}
		return w
	})
	if err != nil {
		return nil, err
	}
	if len(hidden) > 0 {
		return nil, fmt.Errorf("the counting wrapper hides %v of the %s driver: add them to internal/testing/scale/count.go", hidden, driver.InfoOf(l).Name)
	}
	return out, nil
}
