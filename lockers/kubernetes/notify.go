package kubernetes

import (
	"context"
	"errors"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fencekit/fence"
)

// rewatchDelay is how long a release watch waits before it is set up
// again after the server ended it.
const rewatchDelay = 200 * time.Millisecond

// NotifyRelease implements driver.ReleaseNotifier with a watch of key's
// Lease (a list and a watch from the list's resourceVersion, both with
// the field selector metadata.name), which signals when the Lease is
// released, broken, deleted, taken by another holder or given a new
// published value, and when the lease it shows runs out for this
// Locker: a full leaseDurationSeconds after the watch (or any read of
// this Locker) first saw its resourceVersion. A renewal, which changes
// nothing but renewTime, signals nothing. It returns once the server has
// answered the watch: a change after the list is never missed.
//
// The API server ends watches after a while (--min-request-timeout, 30
// minutes by default, at random up to twice that) and on errors; the
// watch is then set up again, after rewatchDelay, and signals once it
// is, since a release may have happened in between. ctx bounds the
// setting up only; stop ends the watch and waits for its goroutine.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	name, _ := leaseName(key)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, last, err := d.watch(ctx, wctx, key, name)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	n := &notifier{d: d, key: key, name: name, c: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.follow(wctx, w, last)
	}()
	stop := sync.OnceFunc(func() {
		cancel()
		<-done
	})
	return n.c, stop, nil
}

// watch lists key's Lease, name, and watches it from the list's
// resourceVersion for as long as wctx lasts; setting up takes at most
// as long as ctx. It returns the watch and the Lease listed (nil if
// none).
func (d *store) watch(ctx, wctx context.Context, key, name string) (watch.Interface, *coordv1.Lease, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := d.leases().List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, nil, d.apiError("list", name, err)
	}
	var last *coordv1.Lease
	if len(list.Items) > 0 {
		last = &list.Items[0]
	}
	type result struct {
		w   watch.Interface
		err error
	}
	ready := make(chan result, 1)
	go func() {
		w, err := d.leases().Watch(wctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
		ready <- result{w, err}
	}()
	select {
	case r := <-ready:
		if r.err != nil {
			return nil, nil, d.apiError("watch", name, r.err)
		}
		return r.w, last, nil
	case <-ctx.Done():
		// wctx is cancelled by the caller, which ends the request.
		go func() {
			if r := <-ready; r.w != nil {
				r.w.Stop()
			}
		}()
		return nil, nil, ctx.Err()
	}
}

// notifier passes a watch's changes of one Lease on to a waiter.
type notifier struct {
	d    *store
	key  string
	name string
	c    chan struct{}

	last  view // what the Lease showed at the last event
	timer fence.Timer
}

// view is what the waiters of a Lease care about.
type view struct {
	exists     bool
	holder     string
	owner      string
	token      fence.Token
	value      string
	valueToken string
	corrupt    bool
}

func (n *notifier) signal() {
	select {
	case n.c <- struct{}{}:
	default:
	}
}

// follow passes on the events of w until wctx ends, and sets the watch
// up again when the server ends it. last is the Lease listed before w.
func (n *notifier) follow(wctx context.Context, w watch.Interface, last *coordv1.Lease) {
	defer func() {
		w.Stop()
		n.stopTimer()
	}()
	n.see(last, false)
	for {
		var expired <-chan time.Time
		if n.timer != nil {
			expired = n.timer.C()
		}
		select {
		case <-wctx.Done():
			return
		case <-expired:
			n.timer = nil
			n.signal()
		case ev, ok := <-w.ResultChan():
			switch {
			case ok && (ev.Type == watch.Added || ev.Type == watch.Modified):
				if l, isLease := ev.Object.(*coordv1.Lease); isLease {
					n.see(l, true)
				}
			case ok && ev.Type == watch.Deleted:
				n.see(nil, true)
			case ok && ev.Type == watch.Bookmark:
			default: // ended, or an error event (410 Gone, say)
				w.Stop()
				again, l, err := n.rewatch(wctx)
				if err != nil {
					return
				}
				w = again
				n.see(l, false)
				n.signal()
			}
		}
	}
}

// rewatch sets the watch up again, every rewatchDelay until it works or
// wctx ends.
func (n *notifier) rewatch(wctx context.Context) (watch.Interface, *coordv1.Lease, error) {
	for {
		t := time.NewTimer(rewatchDelay)
		select {
		case <-wctx.Done():
			t.Stop()
			return nil, nil, wctx.Err()
		case <-t.C:
		}
		w, l, err := n.d.watch(wctx, wctx, n.key, n.name)
		if err == nil {
			return w, l, nil
		}
		if errors.Is(err, context.Canceled) && wctx.Err() != nil {
			return nil, nil, err
		}
	}
}

// see takes in l, the Lease as an event or a list shows it (nil: none),
// signals a change the waiters care about when changed is true, and
// times the end of the lease it shows.
func (n *notifier) see(l *coordv1.Lease, changed bool) {
	n.stopTimer()
	var v view
	if l != nil {
		v.exists = true
		r, err := parseLease(n.key, l)
		if err != nil {
			// The waiter's attempt reports the corruption.
			if changed {
				n.signal()
			}
			n.last = view{exists: true, corrupt: true}
			return
		}
		v.holder, v.owner, v.token = r.holder, r.owner, r.token
		v.value, v.valueToken = l.Annotations[annValue], l.Annotations[annValueToken]
		now := n.d.clock.Now()
		if held, until := n.d.holding(n.key, r, now); held {
			n.timer = n.d.clock.NewTimer(until.Sub(now))
		} else if changed {
			n.signal() // free, or run out for this Locker
		}
	}
	if changed && v != n.last {
		n.signal()
	}
	n.last = v
}

func (n *notifier) stopTimer() {
	if n.timer != nil {
		n.timer.Stop()
		n.timer = nil
	}
}
