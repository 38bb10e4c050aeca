package gcs

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/probe/probetest"
)

// BenchmarkAcquireRelease measures an Acquire and a Release on the
// emulator and reports the HTTP requests they make (requests/op):
//
//	go test -run '^$' -bench . -benchtime 2s ./lockers/gcs
//
// with fake-gcs-server running and FENCE_GCS_ENDPOINT set (source
// scripts/services.sh and scripts/emulators.sh, then fake_gcs_up).
//
// SameKey takes and frees one key over and over: the Locker writes under
// the generation it remembers, one request each. NewKey takes a key never
// used before: a read (not found) comes first. The emulator does not
// throttle; on Cloud Storage, SameKey would be held to about one write per
// second per object.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, bc := range []struct {
		name string
		key  func(i int) string
	}{
		{"SameKey", func(int) string { return "bench" }},
		{"NewKey", func(i int) string { return "bench-" + strconv.Itoa(i) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bucket := newBucket(b)
			c := &counter{next: http.DefaultTransport}
			l := newLocker(b, bucket, c, nil)
			ctx := b.Context()
			i := 0
			b.ResetTimer()
			for b.Loop() {
				lease, err := l.Acquire(ctx, bc.key(i), MinTTL, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx, lease); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(c.total())/float64(i), "requests/op")
		})
	}
}

// BenchmarkRenew measures one Renew of a held lease: one write.
func BenchmarkRenew(b *testing.B) {
	bucket := newBucket(b)
	c := &counter{next: http.DefaultTransport}
	l := newLocker(b, bucket, c, nil)
	lease, err := l.Acquire(b.Context(), "bench", time.Hour, nil)
	if err != nil {
		b.Fatal(err)
	}
	start := c.total()
	n := 0
	for b.Loop() {
		if lease, err = l.Renew(b.Context(), lease); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(c.total()-start)/float64(n), "requests/op")
}

// BenchmarkHandOff measures the hand-off from a holder to a Lock waiting
// through another client, waking on a probe (the default) or polling
// (ProbeInterval probe.Off), alternating (see probetest.HandOff):
//
//	go test -run '^$' -bench HandOff -benchtime 200x ./lockers/gcs/
func BenchmarkHandOff(b *testing.B) {
	bucket := newBucket(b)
	holder := newLocker(b, bucket, nil, nil)
	probed := newLocker(b, bucket, nil, nil)
	polled := newLocker(b, bucket, nil, &Options{ProbeInterval: probe.Off})
	probetest.HandOff(b, holder.Locker, probed.Locker, polled.Locker)
}

// BenchmarkPublishNotice measures how soon a follower's probe sees a
// Publish (see probetest.PublishNotice). fake-gcs-server does not limit
// writes to one object name to about one a second, as Cloud Storage does:
//
//	go test -run '^$' -bench PublishNotice -benchtime 200x ./lockers/gcs/
func BenchmarkPublishNotice(b *testing.B) {
	bucket := newBucket(b)
	holder := newLocker(b, bucket, nil, nil)
	follower := newLocker(b, bucket, nil, nil)
	probetest.PublishNotice(b, holder.Locker, follower.Locker, time.Hour)
}
