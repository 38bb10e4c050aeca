package gcs

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

// TestConformance runs lockertest's suite on fake-gcs-server (see
// objlocktest.Conformance).
func TestConformance(t *testing.T) {
	t.Parallel()
	objlocktest.Conformance(t, objHarness, MaxObjectNameLen, MaxTTL)
}

// A Session on Cloud Storage renews one object at most once a second.
func TestSessionRenewsAtMostOncePerSecond(t *testing.T) {
	l := newLocker(t, newBucket(t), nil, nil)
	if got := driver.InfoOf(l.Locker).MinRenewInterval; got != MinRenewInterval {
		t.Fatalf("MinRenewInterval %v; want %v", got, MinRenewInterval)
	}
	if _, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 10 * time.Second, RenewInterval: 500 * time.Millisecond}); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("RenewInterval 500ms: %v; want ErrInvalid", err)
	}
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: MinTTL})
	if err != nil {
		t.Fatalf("TTL MinTTL, default RenewInterval: %v", err)
	}
	s.Close(t.Context())
}
