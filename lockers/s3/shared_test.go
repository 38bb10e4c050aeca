package s3

import (
	"net/http"
	"testing"

	"github.com/fencekit/fence/internal/objlock/objlocktest"
	"github.com/fencekit/fence/internal/s3conn"
)

// objHarness runs objlocktest's tests against MinIO.
var objHarness = objlocktest.Harness{
	MinTTL:    MinTTL,
	Version:   "ETag",
	NewBucket: func(t *testing.T) string { return newBucket(t) },
	NewLocker: func(t *testing.T, bucket string, rt http.RoundTripper, o objlocktest.Options) *objlocktest.Locker {
		l := newSeenLocker(t, newClient(t, rt), bucket, &Options{
			Prefix: o.Prefix, Clock: o.Clock, TrustedClock: o.TrustedClock, MaxClockSkew: o.MaxClockSkew,
			MaxAttempts: o.MaxAttempts, Backoff: o.Backoff, ProbeInterval: o.ProbeInterval,
		}, o.Seen)
		return &objlocktest.Locker{Locker: l.Locker, Store: l.d, Object: l.object}
	},
	WriteRaw:      writeRaw,
	VersionOf:     etagOf,
	IsWrite:       func(req *http.Request) bool { return req.Method == http.MethodPut },
	ErrorResponse: errorResponse,
	StatusOf:      s3conn.StatusOf,
	// S3 tells a missing key (NoSuchKey) from a missing bucket
	// (NoSuchBucket): no request asks for the bucket.
	FirstReads: 1,
	Creates:    true,
}

// TestShared runs the tests that lockers/gcs and lockers/s3 share.
func TestShared(t *testing.T) {
	t.Parallel()
	objlocktest.Run(t, objHarness)
}
