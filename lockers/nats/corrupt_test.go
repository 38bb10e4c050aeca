package nats

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestCorruptRecord: an entry that is not a record of this package gets
// fence.ErrCorrupt from every call, and no call writes over it.
func TestCorruptRecord(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	bucket := newBucket(t, js, "corrupt", 1)
	kv, err := js.KeyValue(t.Context(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	for i, data := range []string{
		"garbage",
		`{"v":1,"state":"held","owner":"o","token":"99999999","ttl_ns":1000000000}`, // a token above its revision
		`{"v":1,"state":"free","owner":"o","ttl_ns":1000000000}`,                    // free without a token
	} {
		key := "k" + string(rune('a'+i))
		rev, err := kv.Put(t.Context(), keyName(key), []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		l := newTestLocker(t, js, bucket, nil, nil)
		lease := fence.Lease{Key: key, Owner: "o", Token: fence.Token(rev), TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
		if _, err := l.Acquire(t.Context(), key, time.Minute, nil); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("%s: Acquire: %v; want fence.ErrCorrupt", data, err)
		}
		if _, err := l.Inspect(t.Context(), key); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("%s: Inspect: %v; want fence.ErrCorrupt", data, err)
		}
		if err := l.Break(t.Context(), key); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("%s: Break: %v; want fence.ErrCorrupt", data, err)
		}
		if err := l.d.Renew(t.Context(), lease); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("%s: driver Renew: %v; want fence.ErrCorrupt", data, err)
		}
		if err := l.d.Release(t.Context(), lease); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("%s: driver Release: %v; want fence.ErrCorrupt", data, err)
		}
		e, err := kv.Get(t.Context(), keyName(key))
		if err != nil || e.Revision() != rev || string(e.Value()) != data {
			t.Errorf("%s: the entry was written over (revision %d, was %d)", data, e.Revision(), rev)
		}
	}
}
