package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// benchRetryPeriod is the RetryPeriod of the benchmarks' client-go
// electors: how often a waiting elector asks the server again (it has
// no watch), with client-go's jitter of up to 1.2 times more.
const benchRetryPeriod = 200 * time.Millisecond

// BenchmarkAcquireRelease takes a free key and releases it, one after
// the other, with this Locker (Acquire, Release: a read and an update
// each) and with a client-go elector (Run until it leads, then cancel
// with ReleaseOnCancel: a read and an update to acquire, a read and an
// update to release), side by side on the same server.
//
//	go test -run '^$' -bench 'AcquireRelease' -count 5 ./lockers/kubernetes
func BenchmarkAcquireRelease(b *testing.B) {
	client, cfg := adminClient(b)
	ns := kubetest.Namespace(b, cfg)
	b.Run("fence", func(b *testing.B) {
		l := newLocker(b, client, ns, nil, nil)
		ctx := b.Context()
		key := fmt.Sprintf("bench-ar-fence-%d", b.N)
		for b.Loop() {
			lease, err := l.Acquire(ctx, key, 15*time.Second, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client-go", func(b *testing.B) {
		ctx := b.Context()
		key := fmt.Sprintf("bench-ar-clientgo-%d", b.N)
		for b.Loop() {
			runCtx, cancel := context.WithCancel(ctx)
			le := clientGoBenchElector(b, client, ns, key, func(context.Context) { cancel() })
			le.Run(runCtx)
			cancel()
		}
	})
}

// BenchmarkHandOff measures a hand-off: one holder releases a key that
// another is waiting for, until the waiter holds it. The waiter is a
// fence Session.Lock woken by the Lease's watch, or a client-go elector,
// which asks again every benchRetryPeriod (jittered). Each iteration
// first lets the waiter start waiting (untimed), then times the release
// and the take-over.
//
//	go test -run '^$' -bench 'HandOff' -benchtime 20x -count 5 ./lockers/kubernetes
func BenchmarkHandOff(b *testing.B) {
	client, cfg := adminClient(b)
	ns := kubetest.Namespace(b, cfg)
	b.Run("fence", func(b *testing.B) {
		ctx := b.Context()
		key := fmt.Sprintf("bench-ho-fence-%d", b.N)
		holder := newLocker(b, client, ns, nil, nil)
		s, err := fence.NewSession(newLocker(b, client, ns, nil, nil).Locker, &fence.SessionOptions{TTL: 15 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close(ctx)
		for b.Loop() {
			b.StopTimer()
			lease, err := holder.Acquire(ctx, key, 15*time.Second, nil)
			if err != nil {
				b.Fatal(err)
			}
			got, released := make(chan error, 1), make(chan error, 1)
			go func() {
				h, err := s.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
				got <- err
				if err == nil {
					released <- h.Release(ctx)
				}
			}()
			time.Sleep(100 * time.Millisecond) // the waiter waits
			b.StartTimer()
			if err := holder.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
			if err := <-got; err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := <-released; err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("client-go", func(b *testing.B) {
		ctx := b.Context()
		key := fmt.Sprintf("bench-ho-clientgo-%d", b.N)
		for b.Loop() {
			b.StopTimer()
			holdCtx, release := context.WithCancel(ctx)
			leading := make(chan struct{})
			holder := clientGoBenchElector(b, client, ns, key, func(c context.Context) { close(leading); <-c.Done() })
			holderDone := make(chan struct{})
			go func() { holder.Run(holdCtx); close(holderDone) }()
			<-leading
			waitCtx, stop := context.WithCancel(ctx)
			took := make(chan struct{})
			waiter := clientGoBenchElector(b, client, ns, key, func(context.Context) { close(took); stop() })
			waiterDone := make(chan struct{})
			go func() { waiter.Run(waitCtx); close(waiterDone) }()
			time.Sleep(100 * time.Millisecond) // the waiter waits
			b.StartTimer()
			release()
			<-took
			b.StopTimer()
			<-holderDone
			<-waiterDone
			stop()
			b.StartTimer()
		}
	})
}

// clientGoBenchElector returns a client-go elector of a fresh identity
// on key's Lease that calls lead when it leads and releases the Lease
// when its Run is cancelled.
func clientGoBenchElector(b *testing.B, client *k8s.Clientset, ns, key string, lead func(context.Context)) *leaderelection.LeaderElector {
	b.Helper()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: key, Namespace: ns},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: fence.NewOwnerID()},
		},
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     benchRetryPeriod,
		ReleaseOnCancel: true,
		Callbacks:       leaderelection.LeaderCallbacks{OnStartedLeading: lead, OnStoppedLeading: func() {}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return le
}
