package kubernetes

import (
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/testing/kubetest"
	"github.com/fencekit/fence/lockers/lockertest"
)

// Leases in the suite are timed by a fake clock: no Locker reads the API
// server's clock, so nothing sleeps for a lease.
const (
	testTTL      = time.Hour
	testShortTTL = time.Second
	contenders   = 8
)

// TestConformance runs the suite on a namespace of its own. Its lockers
// share one fake clock and one Observations: what one saw counts for
// all, as in one process. Its Restart forgets every observation, as a
// restarted process would (the shared server is not restarted).
func TestConformance(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	clock := clocktest.New(time.Now().Truncate(time.Microsecond))
	var (
		mu  sync.Mutex
		obs = clockfree.NewObservations()
	)
	locker := func(t *testing.T) *testLocker {
		mu.Lock()
		defer mu.Unlock()
		return newLocker(t, client, ns, &Options{Clock: clock}, obs)
	}
	lockertest.Run(t, lockertest.Harness{
		New:      func(t *testing.T) *fence.Locker { return locker(t).Locker },
		TTL:      testTTL,
		ShortTTL: testShortTTL,
		Expire: func(t *testing.T) {
			// A Locker must first see a lease to time it: look at every
			// short lease held so far.
			l := locker(t)
			for _, key := range heldKeys(t, client, ns, testShortTTL) {
				if _, err := l.Inspect(t.Context(), key); err != nil {
					t.Fatalf("Expire: Inspect(%q): %v", key, err)
				}
			}
			clock.Advance(testShortTTL + time.Millisecond)
		},
		Pass:       func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen:  MaxKeyLen,
		BadTTLs:    []time.Duration{0, -time.Second, MinTTL - time.Nanosecond, MaxTTL + time.Second},
		Now:        clock.Now,
		Contenders: contenders,
		Restart: func(*testing.T) {
			mu.Lock()
			defer mu.Unlock()
			obs = clockfree.NewObservations()
		},
	})
}

// heldKeys lists the keys of the Leases of namespace held for at most
// max.
func heldKeys(t *testing.T, c *k8s.Clientset, namespace string, max time.Duration) []string {
	t.Helper()
	list, err := c.CoordinationV1().Leases(namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list Leases: %v", err)
	}
	var keys []string
	for _, l := range list.Items {
		s := l.Spec
		if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.LeaseDurationSeconds == nil || time.Duration(*s.LeaseDurationSeconds)*time.Second > max {
			continue
		}
		key := l.Name
		if k, ok := l.Annotations[annKey]; ok {
			key = k
		}
		keys = append(keys, key)
	}
	return keys
}
