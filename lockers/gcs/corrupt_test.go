package gcs

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

// A record corrupted by hand is refused by every method with a
// *fence.CorruptError, which does not match fence.ErrInvalid (the record is
// at fault, not the caller's input), and nothing is written over it: by a Locker that
// never saw the key, and by the holder whose remembered generation is
// stale.
func TestCorruptedRecordIsNeitherUsedNorOverwritten(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	for _, tc := range objlocktest.BadRecords {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			holder := newLocker(t, bucket, nil, &Options{Prefix: "corrupt/"})
			key := tc.Name
			lease := acquire(t, holder, key, MinTTL*10)
			name := holder.object(key)
			gen := writeRaw(t, bucket, name, []byte(tc.Data))
			stranger := newLocker(t, bucket, nil, &Options{Prefix: "corrupt/"})
			for _, l := range []struct {
				who string
				l   *testLocker
			}{{"holder", holder}, {"stranger", stranger}} {
				_, err := l.l.Acquire(t.Context(), key, MinTTL, nil)
				wantCorrupt(t, err, l.who+" Acquire", key)
				_, err = l.l.Renew(t.Context(), lease)
				wantCorrupt(t, err, l.who+" Renew", key)
				wantCorrupt(t, l.l.Release(t.Context(), lease), l.who+" Release", key)
				wantCorrupt(t, l.l.Break(t.Context(), key), l.who+" Break", key)
				_, err = l.l.Inspect(t.Context(), key)
				wantCorrupt(t, err, l.who+" Inspect", key)
			}
			if got := generation(t, bucket, name); got != gen {
				t.Fatalf("the corrupted object's generation went from %d to %d: something wrote over it", gen, got)
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
