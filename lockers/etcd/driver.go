package etcd

import (
	"context"
	"errors"
	"fmt"
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
	c      *clientv3.Client
	clock  fence.Clock // for the local times of HeldError and LockInfo
	prefix string
	minTTL time.Duration
	leases leases
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

// Acquire implements driver.Locker. It takes an etcd lease of ttl
// (rounded up to whole seconds: a spare, or a new one; see the package
// doc) and runs one transaction: if the lock record does not exist, it
// creates it attached to that lease, with the last record, and the
// transaction's revision (the record's create revision) is the token;
// otherwise it reads the record, keeps the unused lease as a spare and
// reports the holder in a *fence.HeldError whose ValidUntil is the
// holder's remaining time on the server (whole seconds, rounded down)
// added to the send time of the question. A holder whose lease turns out
// to have ended meanwhile gets driver.ErrAcquireRaced.
//
// When the transaction's answer is lost, the lease is left alone: it may
// hold the key, which the caller can find with Inspect (fence.Session
// does), and it expires after ttl otherwise.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	secs := seconds(ttl)
	if id, at, ok := d.leases.takeSpare(secs); ok {
		lease, err := d.acquire(ctx, key, owner, ttl, secs, clientv3.LeaseID(id), at, true)
		if !errors.Is(err, errSpareGone) {
			return lease, err
		}
		// The spare ended sooner than it could: take a new lease.
	}
	sent := time.Now()
	grant, err := d.c.Grant(ctx, secs)
	if err != nil {
		return fence.Lease{}, fmt.Errorf("grant a lease: %w", err)
	}
	if grant.TTL != secs {
		d.revoke(ctx, grant.ID)
		return fence.Lease{}, &fence.InvalidError{Field: "ttl", Reason: fmt.Sprintf(
			"%v: the server grants leases of at least %d s (1.5 election timeouts), not %d s; use a longer TTL, or set the locker's minimum TTL to the server's", ttl, grant.TTL, secs)}
	}
	return d.acquire(ctx, key, owner, ttl, secs, grant.ID, sent, false)
}

// acquire runs Acquire's transaction with etcd lease id of secs seconds,
// which holds no key and lasts its full TTL from at, at least. A spare
// is kept alive at the same time, so that its TTL restarts after the
// portable fence.Locker's send time (Lease.ValidUntil is that time plus ttl);
// should that fail, so does the Acquire, and a record it created is left
// to expire with the lease (a Session finds it with Inspect).
func (d *store) acquire(ctx context.Context, key, owner string, ttl time.Duration, secs int64, id clientv3.LeaseID, at time.Time, spare bool) (fence.Lease, error) {
	var kept chan error
	if spare {
		kept = make(chan error, 1)
		sent := time.Now()
		go func() {
			resp, err := d.c.KeepAliveOnce(ctx, id)
			if err == nil && resp.TTL != secs {
				err = fmt.Errorf("the spare lease lasts %d s, not %d s", resp.TTL, secs)
			}
			if err == nil {
				at = sent
			}
			kept <- err
		}()
	}
	rec := encodeRecord(owner)
	held := d.held(key)
	resp, err := d.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(held), "=", 0)).
		Then(clientv3.OpPut(held, rec, clientv3.WithLease(id)), clientv3.OpPut(d.last(key), rec)).
		Else(clientv3.OpGet(held)).
		Commit()
	var kerr error
	if spare {
		kerr = <-kept
	}
	if err != nil {
		if spare && errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return fence.Lease{}, errSpareGone
		}
		if etcdclient.Refused(err) && kerr == nil {
			d.leases.addSpare(int64(id), secs, at)
		}
		return fence.Lease{}, err
	}
	if !resp.Succeeded {
		if kerr == nil {
			d.leases.addSpare(int64(id), secs, at) // it holds nothing
		}
		return fence.Lease{}, d.heldError(ctx, key, resp.Responses[0].GetResponseRange().Kvs)
	}
	if kerr != nil {
		return fence.Lease{}, fmt.Errorf("keep the lease alive: %w", kerr)
	}
	d.leases.refreshed(int64(id), secs, at)
	return fence.Lease{Key: key, Owner: owner, Token: fence.Token(resp.Header.Revision), TTL: ttl}, nil
}

// errSpareGone is what acquire returns when the spare lease it attached the
// record to did not exist: Acquire then grants a new one.
var errSpareGone = errors.New("the spare lease had ended")

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
// whole seconds (the server rounds down), so never later than the true
// end. alive is false when the lease no longer exists.
func (d *store) expiry(ctx context.Context, lease int64) (until time.Time, alive bool, err error) {
	sent := d.clock.Now()
	resp, err := d.c.TimeToLive(ctx, clientv3.LeaseID(lease))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("ask the lease's time to live: %w", err)
	}
	if resp.TTL < 0 {
		return time.Time{}, false, nil
	}
	return sent.Add(time.Duration(resp.TTL) * time.Second), true, nil
}

// revoke revokes an etcd lease that holds no key of a lease given out, or
// one whose key is being freed anyway: if it fails, the lease expires by
// itself.
func (d *store) revoke(ctx context.Context, id clientv3.LeaseID) {
	_, _ = d.c.Revoke(ctx, id)
}

// current reads key's lock record and checks that it is lease's: the
// lease's token is its create revision and its owner the lease's. It
// returns the record's etcd lease, or a *fence.NotHeldError.
func (d *store) current(ctx context.Context, lease fence.Lease) (int64, error) {
	resp, err := d.c.Get(ctx, d.held(lease.Key))
	if err != nil {
		return 0, err
	}
	return d.check(lease, resp.Kvs)
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

// Renew implements driver.Locker: it reads the lock record, checks
// its owner and token (its create revision), and keeps its etcd lease
// alive once, which restarts the lease's TTL on the leader. A lease whose
// record is gone or another's, or whose etcd lease ended in between, gets
// a *fence.NotHeldError. Keeping the etcd lease alive after the check is
// safe: that lease holds no key but this lease's.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	id, err := d.current(ctx, lease)
	if err != nil {
		return err
	}
	sent := time.Now()
	resp, err := d.c.KeepAliveOnce(ctx, clientv3.LeaseID(id))
	if err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			d.leases.forget(id)
			return &fence.NotHeldError{Key: lease.Key, Reason: "its etcd lease ended"}
		}
		return err
	}
	d.leases.refreshed(id, resp.TTL, sent)
	return nil
}

// Release implements driver.Locker: one transaction that deletes the
// lock record if its create revision is the lease's token and its value
// names the lease's owner (compare-and-delete), and reads it otherwise.
// The record's etcd lease, which then holds nothing, is kept as a spare
// for this Locker's next Acquire. A lease whose record is gone or
// another's gets a *fence.NotHeldError. The last record stays.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	held := d.held(lease.Key)
	resp, err := d.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(held), "=", int64(lease.Token)),
			clientv3.Compare(clientv3.Value(held), "=", encodeRecord(lease.Owner))).
		Then(clientv3.OpDelete(held, clientv3.WithPrevKV())).
		Else(clientv3.OpGet(held)).
		Commit()
	if err != nil {
		return err
	}
	if resp.Succeeded {
		for _, kv := range resp.Responses[0].GetResponseDeleteRange().PrevKvs {
			d.leases.release(kv.Lease)
		}
		return nil
	}
	_, err = d.check(lease, resp.Responses[0].GetResponseRange().Kvs)
	if err == nil {
		// Same token and owner, yet the compare failed: cannot be.
		err = &fence.NotHeldError{Key: lease.Key, Reason: "the record changed during the release"}
	}
	return err
}

// Break implements driver.Locker: it deletes the lock record,
// whoever holds it, and revokes the etcd lease it was attached to. The
// last record stays. The next Acquire creates the record again, at a
// later revision: a higher token.
func (d *store) Break(ctx context.Context, key string) error {
	resp, err := d.c.Delete(ctx, d.held(key), clientv3.WithPrevKV())
	if err != nil {
		return err
	}
	for _, kv := range resp.PrevKvs {
		if kv.Lease != 0 {
			d.revoke(ctx, clientv3.LeaseID(kv.Lease))
		}
	}
	return nil
}

// Inspect implements driver.Locker: it reads the lock record and the
// last record in one transaction, and, when the key is held, asks the
// remaining time of its etcd lease.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	resp, err := d.c.Txn(ctx).Then(clientv3.OpGet(d.held(key)), clientv3.OpGet(d.last(key))).Commit()
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
		until, alive, err := d.expiry(ctx, r.lease)
		if err != nil {
			return fence.LockInfo{}, err
		}
		return fence.LockInfo{Key: key, Held: alive, Owner: r.owner, Token: r.token, ValidUntil: until}, nil
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
