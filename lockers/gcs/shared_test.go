package gcs

import (
	"errors"
	"net/http"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

// objHarness runs objlocktest's tests against fake-gcs-server.
var objHarness = objlocktest.Harness{
	MinTTL:    MinTTL,
	Version:   "generation",
	NewBucket: func(t *testing.T) string { return newBucket(t) },
	NewLocker: func(t *testing.T, bucket string, rt http.RoundTripper, o objlocktest.Options) *objlocktest.Locker {
		l := newSeenLocker(t, newClient(t, rt).Bucket(bucket), &Options{
			Prefix: o.Prefix, Clock: o.Clock, TrustedClock: o.TrustedClock, MaxClockSkew: o.MaxClockSkew,
			MaxAttempts: o.MaxAttempts, Backoff: o.Backoff, ProbeInterval: o.ProbeInterval,
		}, o.Seen)
		return &objlocktest.Locker{Locker: l.Locker, Store: l.d, Object: l.object}
	},
	WriteRaw: func(t *testing.T, bucket, name string, data []byte) string {
		return formatGen(writeRaw(t, bucket, name, data))
	},
	VersionOf: func(t *testing.T, bucket, name string) string {
		if gen := generation(t, bucket, name); gen != 0 {
			return formatGen(gen)
		}
		return ""
	},
	IsWrite:       isUpload,
	ErrorResponse: errorResponse,
	StatusOf: func(err error) int {
		if ge, ok := errors.AsType[*googleapi.Error](err); ok {
			return ge.Code
		}
		return 0
	},
	// The first read of a missing object also asks for the bucket.
	FirstReads: 2,
}

// TestShared runs the tests that lockers/gcs and lockers/s3 share.
func TestShared(t *testing.T) {
	t.Parallel()
	objlocktest.Run(t, objHarness)
}
