package azblob

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/probe/probetest"
)

// The benchmarks run on Azurite: latency and requests per operation of
// the Locker's main paths. Run them with
//
//	go test -run '^$' -bench . -benchtime 200x ./lockers/azblob/
//
// with the emulator's environment (scripts/emulators.sh).

// BenchmarkAcquireRelease takes and frees one key in a loop.
func BenchmarkAcquireRelease(b *testing.B) {
	n := &counter{}
	l := newLocker(b, azuritetest.NewContainer(b, n, false), nil)
	k := key(b)
	n.n.Store(0)
	for b.Loop() {
		lease, err := l.Acquire(b.Context(), k, MinTTL, nil)
		if err != nil {
			b.Fatalf("Acquire: %v", err)
		}
		if err := l.Release(b.Context(), lease); err != nil {
			b.Fatalf("Release: %v", err)
		}
	}
	b.ReportMetric(float64(n.n.Load())/float64(b.N), "requests/op")
}

// BenchmarkAcquireHeld is a lost try on a held key.
func BenchmarkAcquireHeld(b *testing.B) {
	n := &counter{}
	l := newLocker(b, azuritetest.NewContainer(b, n, false), nil)
	holder := mustAcquire(b, l, key(b), MaxTTL, nil)
	n.n.Store(0)
	for b.Loop() {
		if _, err := l.Acquire(b.Context(), holder.Key, MinTTL, nil); !errors.Is(err, fence.ErrHeld) {
			b.Fatalf("Acquire of a held key: %v", err)
		}
	}
	b.ReportMetric(float64(n.n.Load())/float64(b.N), "requests/op")
}

// BenchmarkRenew renews one lease in a loop.
func BenchmarkRenew(b *testing.B) {
	n := &counter{}
	l := newLocker(b, azuritetest.NewContainer(b, n, false), nil)
	lease := mustAcquire(b, l, key(b), MaxTTL, nil)
	n.n.Store(0)
	for b.Loop() {
		var err error
		if lease, err = l.Renew(b.Context(), lease); err != nil {
			b.Fatalf("Renew: %v", err)
		}
	}
	b.ReportMetric(float64(n.n.Load())/float64(b.N), "requests/op")
}

// BenchmarkHandOff measures the hand-off from a holder to a Lock waiting
// through another client, waking on a probe (the default) or polling
// (ProbeInterval probe.Off), alternating (see probetest.HandOff):
//
//	go test -run '^$' -bench HandOff -benchtime 200x ./lockers/azblob/
func BenchmarkHandOff(b *testing.B) {
	holder := newLocker(b, azuritetest.NewContainer(b, nil, true), nil)
	name := holder.d.c.URL()
	name = name[strings.LastIndexByte(name, '/')+1:]
	probed := newLocker(b, azuritetest.Client(b, name, nil, true), nil)
	polled := newLocker(b, azuritetest.Client(b, name, nil, true), &Options{ProbeInterval: probe.Off})
	probetest.HandOff(b, holder.Locker, probed.Locker, polled.Locker)
}

// BenchmarkPublishNotice measures how soon a follower's probe sees a
// Publish (see probetest.PublishNotice); the holder renews by hand, as
// Azure's leases last at most a minute:
//
//	go test -run '^$' -bench PublishNotice -benchtime 200x ./lockers/azblob/
func BenchmarkPublishNotice(b *testing.B) {
	holder := newLocker(b, azuritetest.NewContainer(b, nil, true), nil)
	name := holder.d.c.URL()
	name = name[strings.LastIndexByte(name, '/')+1:]
	follower := newLocker(b, azuritetest.Client(b, name, nil, true), nil)
	probetest.PublishNotice(b, holder.Locker, follower.Locker, MaxTTL)
}
