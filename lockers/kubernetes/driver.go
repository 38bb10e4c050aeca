package kubernetes

import (
	"context"
	"fmt"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
)

// leases is the Lease client of the namespace.
func (d *store) leases() coordinationv1.LeaseInterface {
	return d.client.CoordinationV1().Leases(d.namespace)
}

// holding decides whether r, read at now on d's clock, is held, and
// until when on d's clock, as clockfree judges it: a held Lease whose
// resourceVersion d has seen unchanged for its leaseDurationSeconds has
// run out. It notes the sighting; a free Lease is forgotten.
func (d *store) holding(key string, r record, now time.Time) (held bool, until time.Time) {
	if r.holder == "" || (d.ignoreForeign && !r.fenced()) {
		d.obs.Forget(d.namespace, key)
		return false, time.Time{}
	}
	s := clockfree.Sighting{Version: r.rv, Seq: int64(r.seq), Held: true, TTL: r.lease}
	return clockfree.Mode{}.Holding(s, d.obs.Note(d.namespace, key, s, now), now)
}

// Acquire implements driver.Locker. It reads the Lease of key and, if
// it is free or has run out for this Locker, writes the new lease with
// one update conditional on the resourceVersion it read: holderIdentity
// the owner, leaseDurationSeconds the TTL in whole seconds (rounded up),
// acquireTime and renewTime now, leaseTransitions one more, and the
// annotations of the token (the resourceVersion replaced) and the owner.
// A Lease that does not exist is created free first. A read that shows
// a lease this process has since seen replaced (it raced another
// Locker's acquisition) is made again before Acquire reports a holder.
// A failed Acquire writes nothing; a conflict (another writer came first) is reported
// as the holder the Lease then shows, or as driver.ErrAcquireRaced.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	name, hashed := leaseName(key)
	l, r, err := d.read(ctx, key, name, hashed)
	if err != nil {
		return fence.Lease{}, err
	}
	if held, until := d.holding(key, r, d.clock.Now()); held {
		if !d.superseded(key, r) {
			return fence.Lease{}, d.heldError(key, r, until)
		}
		// The read raced a later write that this process made or saw (a
		// contender's acquisition): it shows a lease that is no longer
		// there. Decide on a read made after it.
		if l, r, err = d.read(ctx, key, name, hashed); err != nil {
			return fence.Lease{}, err
		}
		if held, until := d.holding(key, r, d.clock.Now()); held {
			return fence.Lease{}, d.heldError(key, r, until)
		}
	}
	token := fence.Token(r.seq)
	if token <= r.token {
		// Cannot be: every resourceVersion a Lease shows is later than
		// the one its last acquisition replaced.
		return fence.Lease{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("Lease %s: resourceVersion %s is not above its token %d", name, r.rv, r.token)}
	}
	sent := d.clock.Now()
	now := metav1.NewMicroTime(sent)
	next := l.DeepCopy()
	setAnnotation(next, annToken, token.String())
	setAnnotation(next, annOwner, owner)
	if hashed {
		setAnnotation(next, annKey, key)
	}
	delete(next.Annotations, annValue)
	delete(next.Annotations, annValueToken)
	next.Spec.HolderIdentity = &owner
	secs := seconds(ttl)
	next.Spec.LeaseDurationSeconds = &secs
	next.Spec.AcquireTime = &now
	next.Spec.RenewTime = &now
	transitions := nextTransitions(r.transitions)
	next.Spec.LeaseTransitions = &transitions
	updated, err := d.leases().Update(ctx, next, metav1.UpdateOptions{})
	if err == nil {
		d.wrote(key, updated, sent)
		return fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl}, nil
	}
	if !apierrors.IsConflict(err) && (answered(err) || ctx.Err() != nil) {
		return fence.Lease{}, d.apiError("update", name, err)
	}
	// A conflict, or a lost answer: read what the Lease holds now.
	after, gerr := d.get(ctx, name)
	if gerr != nil {
		return fence.Lease{}, fmt.Errorf("%w; reading the Lease back: %w", d.apiError("update", name, err), gerr)
	}
	if after == nil {
		return fence.Lease{}, driver.ErrAcquireRaced // deleted in between
	}
	ar, perr := parseLease(key, after)
	if perr != nil {
		return fence.Lease{}, perr
	}
	if ar.fenced() && ar.owner == owner && ar.token == token {
		// The update was applied; its answer was lost.
		d.wrote(key, after, sent)
		return fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl}, nil
	}
	if !apierrors.IsConflict(err) {
		return fence.Lease{}, d.apiError("update", name, err)
	}
	if held, until := d.holding(key, ar, d.clock.Now()); held {
		return fence.Lease{}, d.heldError(key, ar, until)
	}
	return fence.Lease{}, driver.ErrAcquireRaced
}

// read returns the Lease name of key and its record, creating it free
// first when it does not exist.
func (d *store) read(ctx context.Context, key, name string, hashed bool) (*coordv1.Lease, record, error) {
	l, err := d.get(ctx, name)
	if err != nil {
		return nil, record{}, err
	}
	if l == nil {
		if l, err = d.create(ctx, key, name, hashed); err != nil {
			return nil, record{}, err
		}
	}
	r, err := parseLease(key, l)
	return l, r, err
}

// superseded reports whether d has noted a later resourceVersion of key's
// Lease than r's: r was read before a write that d has seen since.
func (d *store) superseded(key string, r record) bool {
	last, _, ok := d.obs.Last(d.namespace, key)
	return ok && last.Seq > int64(r.seq)
}

// wrote notes l, the Lease as an acquisition sent at sent left it, as
// seen since sent: a contender of this process whose read raced the
// write then knows that read is stale (superseded), and times the new
// lease from when its write was sent, which no later sighting precedes.
func (d *store) wrote(key string, l *coordv1.Lease, sent time.Time) {
	r, err := parseLease(key, l)
	if err != nil {
		d.obs.Forget(d.namespace, key)
		return
	}
	d.holding(key, r, sent)
}

// create creates the Lease name of key, free, and returns it; if another
// writer created it first, it returns the Lease that writer created.
func (d *store) create(ctx context.Context, key, name string, hashed bool) (*coordv1.Lease, error) {
	empty := ""
	l := &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.namespace},
		Spec:       coordv1.LeaseSpec{HolderIdentity: &empty},
	}
	if hashed {
		setAnnotation(l, annKey, key)
	}
	created, err := d.leases().Create(ctx, l, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, d.apiError("create", name, err)
	}
	l, err = d.get(ctx, name)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, driver.ErrAcquireRaced // created and deleted in between
	}
	return l, nil
}

// heldError reports the holder of r, held until until, in a
// *fence.HeldError: a Locker's lease with its owner and token, a holder
// that is no Locker with its identity only.
func (d *store) heldError(key string, r record, until time.Time) error {
	e := &fence.HeldError{Key: key, Owner: r.holder, ValidUntil: until}
	if r.fenced() {
		e.Token = r.token
	}
	return e
}

// setAnnotation sets annotation k of l to v.
func setAnnotation(l *coordv1.Lease, k, v string) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[k] = v
}

// maxConflicts is how many times Renew, Release, Publish and Break read
// the Lease again after a conflict: each conflict is a write of another
// (a label, a Publish of a lost answer) that left the lease as it was.
const maxConflicts = 5

// change applies edit to lease's Lease, if owner and token still hold
// it, with an update conditional on the resourceVersion read. A Lease
// no longer the lease's gets a *fence.NotHeldError. On a conflict it
// reads the Lease again and tries again.
func (d *store) change(ctx context.Context, verb string, lease fence.Lease, edit func(*coordv1.Lease)) error {
	name, _ := leaseName(lease.Key)
	for range maxConflicts {
		l, err := d.get(ctx, name)
		if err != nil {
			return err
		}
		if l == nil {
			return &fence.NotHeldError{Key: lease.Key, Reason: "the Lease was deleted"}
		}
		r, err := parseLease(lease.Key, l)
		if err != nil {
			return err
		}
		if !r.fenced() || r.owner != lease.Owner || r.token != lease.Token {
			return &fence.NotHeldError{Key: lease.Key, Reason: notHeldReason(r)}
		}
		next := l.DeepCopy()
		edit(next)
		_, err = d.leases().Update(ctx, next, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			if err != nil {
				return d.apiError("update", name, err)
			}
			return nil
		}
	}
	return fmt.Errorf("%s Lease %s/%s: %d conflicts in a row", verb, d.namespace, name, maxConflicts)
}

// notHeldReason says why a Lease shows no longer a lease.
func notHeldReason(r record) string {
	switch {
	case r.holder == "":
		return "released or broken"
	case !r.fenced():
		return "taken over by another holder"
	}
	return "taken over"
}

// Renew implements driver.Locker: one update, conditional on the
// resourceVersion read, that writes renewTime and leaseDurationSeconds
// if the Lease still holds the lease's owner and token. Every
// observer sees a new resourceVersion and restarts its wait.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	return d.change(ctx, "renew", lease, func(l *coordv1.Lease) {
		now := metav1.NewMicroTime(d.clock.Now())
		secs := seconds(lease.TTL)
		l.Spec.RenewTime = &now
		l.Spec.LeaseDurationSeconds = &secs
	})
}

// Release implements driver.Locker: one update, conditional on the
// resourceVersion read, that frees the Lease as client-go's
// ReleaseOnCancel does (holderIdentity "", leaseDurationSeconds 1,
// acquireTime and renewTime now) if it still holds the lease's owner and
// token, and removes the published value. The token and owner
// annotations stay: the next token is higher.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	return d.change(ctx, "release", lease, d.free)
}

// free edits a Lease as a release does.
func (d *store) free(l *coordv1.Lease) {
	now := metav1.NewMicroTime(d.clock.Now())
	empty := ""
	one := int32(1)
	l.Spec.HolderIdentity = &empty
	l.Spec.LeaseDurationSeconds = &one
	l.Spec.AcquireTime = &now
	l.Spec.RenewTime = &now
	delete(l.Annotations, annValue)
	delete(l.Annotations, annValueToken)
}

// Break implements driver.Locker: it frees key's Lease as Release does,
// whoever holds it (a Locker's lease or another holder), with an update
// conditional on the resourceVersion read. A Lease that does not exist
// or is free is left alone.
func (d *store) Break(ctx context.Context, key string) error {
	name, _ := leaseName(key)
	for range maxConflicts {
		l, err := d.get(ctx, name)
		if err != nil || l == nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return nil
		}
		next := l.DeepCopy()
		d.free(next)
		_, err = d.leases().Update(ctx, next, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			if err != nil {
				return d.apiError("update", name, err)
			}
			return nil
		}
	}
	return fmt.Errorf("break Lease %s/%s: %d conflicts in a row", d.namespace, name, maxConflicts)
}

// Inspect implements driver.Locker with one read of the Lease. It notes
// what it saw, like a failed Acquire, so that a later Acquire can take
// over a lease that ran out: Held is false once this Locker has seen the
// Lease's resourceVersion unchanged for its leaseDurationSeconds, and
// ValidUntil is when that will be. A Lease held by a Locker's lease
// reports its owner, token and published value; a Lease held by another
// holder (a client-go elector) reports its holderIdentity as Owner with
// the token of the last lease a Locker gave out, or no owner and no
// token when no Locker ever did. A free Lease reports the last lease a
// Locker gave out.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	name, _ := leaseName(key)
	l, err := d.get(ctx, name)
	if err != nil || l == nil {
		return fence.LockInfo{}, err
	}
	r, err := parseLease(key, l)
	if err != nil {
		return fence.LockInfo{}, err
	}
	held, until := d.holding(key, r, d.clock.Now())
	info := fence.LockInfo{Key: key, Held: held, Owner: r.owner, Token: r.token, ValidUntil: until}
	switch {
	case held && r.fenced():
		if info.Value, err = parseValue(key, l, r.token); err != nil {
			return fence.LockInfo{}, err
		}
	case held && r.token != 0:
		info.Owner = r.holder
	case held:
		info.Owner = ""
	}
	return info, nil
}
