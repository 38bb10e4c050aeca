package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/etcdclient"
)

// store is the driver.Locker on an etcd cluster, on input the
// portable layer has validated. Its errors are bare causes; the
// portable fence.Locker prefixes them.
type store struct {
	c        *clientv3.Client
	clock    fence.Clock // for the local times of HeldError and LockInfo
	prefix   string
	minTTL   time.Duration
	shared   shared
	granting sync.Mutex // held while a shared lease is granted
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
	_ driver.BatchRenewer    = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
)

// As implements driver.Aser: it gives the client the Locker runs on to a
// **clientv3.Client.
func (d *store) As(target any) bool {
	if t, ok := target.(**clientv3.Client); ok {
		*t = d.c
		return true
	}
	return false
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "etcd", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: d.minTTL, MaxTTL: MaxTTL}
}

// held is the etcd key of key's lock record.
func (d *store) held(key string) string { return d.prefix + "held/" + key }

// last is the etcd key of key's last record.
func (d *store) last(key string) string { return d.prefix + "last/" + key }

// seconds returns ttl in whole seconds, rounded up, so that the server's
// lease is never shorter than ttl.
func seconds(ttl time.Duration) int64 {
	return int64((ttl + time.Second - 1) / time.Second)
}

// Acquire implements driver.Locker. It runs one transaction: if the
// lock record does not exist, it creates it attached to the Locker's
// shared etcd lease of ttl (rounded up to whole seconds), with the last
// record, and the transaction's revision (the record's create revision)
// is the token; otherwise it reads the record and reports the holder in a
// *fence.HeldError whose ValidUntil is the holder's remaining time on the
// server (whole seconds, rounded down, less slack) added to the send time
// of the question. A holder whose lease turns out to have ended meanwhile
// gets driver.ErrAcquireRaced.
//
// The shared lease is granted by the first Acquire of its TTL, or when
// the one there is has less than half its life surely left. When its
// latest keepalive is too old for the record to surely last ttl from now,
// it is kept alive at the same time as the transaction runs.
//
// When the transaction's answer is lost, the record may exist: the
// Locker deletes it once its TTL has passed unless it is renewed (a
// Session that finds it with Inspect renews it).
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	secs := seconds(ttl)
	for range 2 {
		id, at, err := d.groupLease(ctx, secs)
		if err != nil {
			return fence.Lease{}, err
		}
		lease, err := d.acquire(ctx, key, owner, ttl, secs, id, at)
		if !errors.Is(err, errLeaseGone) {
			return lease, err
		}
		// The shared lease ended sooner than it could: take a new one.
	}
	return fence.Lease{}, errors.New("the shared lease ended twice in a row")
}

// groupLease returns the shared etcd lease of secs seconds and the send
// time of its grant or latest keepalive, granting one when there is none
// with half its life left (see shared.lease).
func (d *store) groupLease(ctx context.Context, secs int64) (int64, time.Time, error) {
	if id, at, ok := d.shared.lease(secs); ok {
		return id, at, nil
	}
	// One grant at a time, so that Acquires racing for a new shared lease
	// get the same one.
	d.granting.Lock()
	defer d.granting.Unlock()
	if id, at, ok := d.shared.lease(secs); ok {
		return id, at, nil
	}
	sent := time.Now()
	grant, err := d.c.Grant(ctx, secs+slack)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("grant a lease: %w", err)
	}
	if grant.TTL != secs+slack {
		d.revoke(ctx, grant.ID)
		return 0, time.Time{}, &fence.InvalidError{Field: "ttl", Reason: fmt.Sprintf(
			"%d s: the server grants leases of at least %d s (1.5 election timeouts), not %d s (the TTL and %d s); use a longer TTL, or set the locker's minimum TTL to the server's", secs, grant.TTL, secs+slack, slack)}
	}
	d.shared.granted(secs, int64(grant.ID), sent)
	return int64(grant.ID), sent, nil
}

// acquire runs Acquire's transaction with shared etcd lease id of secs
// seconds, granted or kept alive by a request sent at at. When at is too
// long ago for the record to last ttl from now, the lease is kept alive
// at the same time; should that fail, so does the Acquire, and a record it
// created is left to the sweep (a Session finds it with Inspect).
func (d *store) acquire(ctx context.Context, key, owner string, ttl time.Duration, secs, id int64, at time.Time) (fence.Lease, error) {
	sent := time.Now()
	var kept chan error
	if at.Add(life(secs)).Before(sent.Add(ttl)) {
		kept = make(chan error, 1)
		go func() { kept <- d.keepAlive(ctx, id, secs) }()
	}
	value := encodeRecord(owner)
	held := d.held(key)
	r := d.shared.begin(key, owner, id)
	resp, err := d.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(held), "=", 0)).
		Then(clientv3.OpPut(held, value, clientv3.WithLease(clientv3.LeaseID(id))), clientv3.OpPut(d.last(key), value)).
		Else(clientv3.OpGet(held)).
		Commit()
	var kerr error
	if kept != nil {
		kerr = <-kept
	}
	until := sent.Add(ttl)
	switch {
	case err != nil && etcdclient.Refused(err):
		d.shared.end(key, r, nil)
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			d.shared.ended(id)
			return fence.Lease{}, errLeaseGone
		}
		return fence.Lease{}, err
	case err != nil:
		d.shared.end(key, r, lost(owner, id, until))
		return fence.Lease{}, err
	case !resp.Succeeded:
		d.shared.end(key, r, nil)
		return fence.Lease{}, d.heldError(ctx, key, resp.Responses[0].GetResponseRange().Kvs)
	}
	lease := fence.Lease{Key: key, Owner: owner, Token: fence.Token(resp.Header.Revision), TTL: ttl}
	d.shared.end(key, r, created(lease, id, until))
	if errors.Is(kerr, errLeaseGone) {
		return fence.Lease{}, errLeaseGone // and the record with it
	}
	if kerr != nil {
		return fence.Lease{}, kerr
	}
	return lease, nil
}

// keepAlive keeps shared etcd lease id of secs seconds (0: unknown) alive
// once, and notes it. A lease the server no longer has gets errLeaseGone.
func (d *store) keepAlive(ctx context.Context, id, secs int64) error {
	sent := time.Now()
	resp, err := d.c.KeepAliveOnce(ctx, clientv3.LeaseID(id))
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		d.shared.ended(id)
		return errLeaseGone
	}
	if err != nil {
		return fmt.Errorf("keep the lease alive: %w", err)
	}
	if secs > 0 && resp.TTL != secs+slack {
		return fmt.Errorf("keep the lease alive: it lasts %d s, not %d s", resp.TTL, secs+slack)
	}
	d.shared.refreshed(id, sent)
	return nil
}

// errLeaseGone is what acquire returns when the shared lease it attached
// the record to did not exist: Acquire then grants a new one.
var errLeaseGone = errors.New("the shared lease had ended")

// heldError reports kvs, the lock record an Acquire found, in a
// *fence.HeldError.
func (d *store) heldError(ctx context.Context, key string, kvs []*mvccpb.KeyValue) error {
	if len(kvs) == 0 {
		return driver.ErrAcquireRaced // cannot be: the same transaction saw it
	}
	r, err := parseLock(key, kvs[0])
	if err != nil {
		return err
	}
	until, alive, err := d.expiry(ctx, r.lease)
	if err != nil {
		return &fence.HeldError{Key: key, Owner: r.owner, Token: r.token}
	}
	if !alive {
		return driver.ErrAcquireRaced // the holder's lease ended since
	}
	return &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: until}
}

// expiry asks the server how long lease has left, and returns its end on
// the driver's clock: the send time of the question plus the remaining
// whole seconds (the server rounds down) less slack, so never later than
// the end of a record on a shared lease that is not renewed. alive is
// false when the lease no longer exists.
func (d *store) expiry(ctx context.Context, lease int64) (until time.Time, alive bool, err error) {
	sent := d.clock.Now()
	resp, err := d.c.TimeToLive(ctx, clientv3.LeaseID(lease))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("ask the lease's time to live: %w", err)
	}
	if resp.TTL < 0 {
		return time.Time{}, false, nil
	}
	return sent.Add(time.Duration(max(resp.TTL-slack, 0)) * time.Second), true, nil
}

// revoke revokes an etcd lease that holds no key of a lease given out: if
// it fails, the lease expires by itself.
func (d *store) revoke(ctx context.Context, id clientv3.LeaseID) {
	_, _ = d.c.Revoke(ctx, id)
}

// check checks that kvs, the result of reading lease's lock record, show
// lease held, and returns its etcd lease.
func (d *store) check(lease fence.Lease, kvs []*mvccpb.KeyValue) (int64, error) {
	if len(kvs) == 0 {
		return 0, &fence.NotHeldError{Key: lease.Key, Reason: "the key is free"}
	}
	if kvs[0].CreateRevision != int64(lease.Token) {
		return 0, &fence.NotHeldError{Key: lease.Key, Reason: fmt.Sprintf("the key was taken since, with token %d", kvs[0].CreateRevision)}
	}
	r, err := parseLock(lease.Key, kvs[0])
	if err != nil {
		return 0, err
	}
	if r.owner != lease.Owner {
		return 0, &fence.NotHeldError{Key: lease.Key, Reason: "the key is held with this token by another owner"}
	}
	return r.lease, nil
}

// Renew implements driver.Locker: it renews lease as RenewBatch does.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	return d.RenewBatch(ctx, []fence.Lease{lease})[0]
}

// Release implements driver.Locker: one transaction that deletes the
// lock record if its create revision is the lease's token and its value
// names the lease's owner (compare-and-delete), and reads it otherwise.
// The shared etcd lease stays, for the Locker's other records. A lease
// whose record is gone or another's gets a *fence.NotHeldError. The last
// record stays.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	held := d.held(lease.Key)
	r := d.shared.begin(lease.Key, lease.Owner, 0)
	resp, err := d.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(held), "=", int64(lease.Token)),
			clientv3.Compare(clientv3.Value(held), "=", encodeRecord(lease.Owner))).
		Then(clientv3.OpDelete(held)).
		Else(clientv3.OpGet(held)).
		Commit()
	switch {
	case err != nil && etcdclient.Refused(err):
		d.shared.end(lease.Key, r, nil)
		return err
	case err != nil:
		d.shared.end(lease.Key, r, func(r *rec) {
			if r.token == lease.Token && r.owner == lease.Owner {
				r.unsure = true
			}
		})
		return err
	case resp.Succeeded:
		d.shared.end(lease.Key, r, func(r *rec) {
			if r.token == lease.Token && r.owner == lease.Owner {
				r.gone = true
			}
		})
		return nil
	}
	d.shared.end(lease.Key, r, nil)
	_, err = d.check(lease, resp.Responses[0].GetResponseRange().Kvs)
	if err == nil {
		// Same token and owner, yet the compare failed: cannot be.
		err = &fence.NotHeldError{Key: lease.Key, Reason: "the record changed during the release"}
	}
	return err
}

// Break implements driver.Locker: it deletes the lock record, whoever
// holds it. It does not revoke the etcd lease the record was attached
// to, which may be a Locker's shared lease holding other records. The
// last record stays. The next Acquire creates the record again, at a
// later revision: a higher token.
func (d *store) Break(ctx context.Context, key string) error {
	r := d.shared.begin(key, "", 0)
	_, err := d.c.Delete(ctx, d.held(key))
	switch {
	case err != nil && etcdclient.Refused(err):
		d.shared.end(key, r, nil)
	case err != nil:
		d.shared.end(key, r, func(r *rec) {
			if !r.gone {
				r.unsure = true
			}
		})
	default:
		d.shared.end(key, r, deleted)
	}
	return err
}

// Inspect implements driver.Locker: it reads the lock record, the last
// record and the value record in one transaction, and, when the key is
// held, asks the remaining time of its etcd lease. The value is the
// holder's when the value record names the lock record's token.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	resp, err := d.c.Txn(ctx).Then(clientv3.OpGet(d.held(key)), clientv3.OpGet(d.last(key)), clientv3.OpGet(d.value(key))).Commit()
	if err != nil {
		return fence.LockInfo{}, err
	}
	heldKVs := resp.Responses[0].GetResponseRange().Kvs
	lastKVs := resp.Responses[1].GetResponseRange().Kvs
	if len(heldKVs) > 0 {
		r, err := parseLock(key, heldKVs[0])
		if err != nil {
			return fence.LockInfo{}, err
		}
		value, err := heldValue(key, r, resp.Responses[2].GetResponseRange().Kvs)
		if err != nil {
			return fence.LockInfo{}, err
		}
		until, alive, err := d.expiry(ctx, r.lease)
		if err != nil {
			return fence.LockInfo{}, err
		}
		if own, ok := d.shared.mine(key, r.token, r.lease); ok && alive {
			// A record of this Locker: its own end, if sooner.
			if u := d.clock.Now().Add(time.Until(own)); u.Before(until) {
				until = u
			}
		}
		return fence.LockInfo{Key: key, Held: alive, Owner: r.owner, Token: r.token, ValidUntil: until, Value: value}, nil
	}
	if len(lastKVs) == 0 {
		return fence.LockInfo{Key: key}, nil
	}
	owner, token, err := parseLast(key, lastKVs[0])
	if err != nil {
		return fence.LockInfo{}, err
	}
	return fence.LockInfo{Key: key, Owner: owner, Token: token}, nil
}
