package objlocktest

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

// RunCorrupt checks that a record corrupted by hand is refused by every method
// with a *fence.CorruptError, which does not match fence.ErrInvalid (the
// record is at fault, not the caller's input), and nothing is written
// over it: by a Locker that never saw the key, and by the holder whose
// remembered version is stale.
func RunCorrupt(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	for _, tc := range BadRecords {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			holder := h.NewLocker(t, bucket, nil, Options{Prefix: "corrupt/"})
			key := tc.Name
			lease := Acquire(t, holder, key, h.MinTTL*10)
			name := holder.Object(key)
			version := h.WriteRaw(t, bucket, name, []byte(tc.Data))
			stranger := h.NewLocker(t, bucket, nil, Options{Prefix: "corrupt/"})
			for _, l := range []struct {
				who string
				l   *Locker
			}{{"holder", holder}, {"stranger", stranger}} {
				_, err := l.l.Acquire(t.Context(), key, h.MinTTL, nil)
				wantCorrupt(t, err, l.who+" Acquire", key)
				_, err = l.l.Renew(t.Context(), lease)
				wantCorrupt(t, err, l.who+" Renew", key)
				wantCorrupt(t, l.l.Release(t.Context(), lease), l.who+" Release", key)
				wantCorrupt(t, l.l.Break(t.Context(), key), l.who+" Break", key)
				_, err = l.l.Inspect(t.Context(), key)
				wantCorrupt(t, err, l.who+" Inspect", key)
			}
			if got := h.VersionOf(t, bucket, name); got != version {
				t.Fatalf("the corrupted object's %s went from %s to %s: something wrote over it", h.Version, version, got)
			}
		})
	}
}

func wantCorrupt(t *testing.T, err error, call, key string) {
	t.Helper()
	ce, ok := errors.AsType[*fence.CorruptError](err)
	if !ok || !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("%s returned %v; want a *fence.CorruptError", call, err)
		return
	}
	if ce.Key != key {
		t.Errorf("%s returned a CorruptError for key %q; want %q", call, ce.Key, key)
	}
	if errors.Is(err, fence.ErrInvalid) {
		t.Errorf("%s returned %v, which matches fence.ErrInvalid; a corrupted record is not bad input", call, err)
	}
}
