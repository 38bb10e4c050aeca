package objlock

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []record{
		{held: true, owner: "o", token: 1, ttl: time.Second, write: "w"},
		{held: true, owner: "é名", token: math.MaxUint64, ttl: MaxTTL, expires: time.Unix(1, 5), write: newWriteID()},
		{owner: fence.NewOwnerID(), token: 42, ttl: time.Nanosecond, write: newWriteID()},
		{held: true, owner: "o", token: 3, ttl: time.Second, write: "w", value: "\x00\xff\"{}é名"},
		{held: true, owner: "o", token: 3, ttl: time.Second, write: "w", value: strings.Repeat("v", fence.MaxValueLen)},
	}
	for _, want := range tests {
		got, err := parseRecord("k", want.encode())
		if err != nil {
			t.Fatalf("parseRecord(%s): %v", want.encode(), err)
		}
		if !got.expires.Equal(want.expires) {
			t.Errorf("expiry %v came back as %v", want.expires, got.expires)
		}
		got.expires, want.expires = time.Time{}, time.Time{}
		if got != want {
			t.Errorf("parseRecord(encode(%+v)) = %+v", want, got)
		}
	}
}

// TestRecordsOfEarlierReleases: a record without a value is encoded as
// records were before values existed, byte for byte, so that readers of
// an earlier release keep reading every record that carries no value.
func TestRecordsOfEarlierReleases(t *testing.T) {
	t.Parallel()
	old := `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`
	r, err := parseRecord("k", []byte(old))
	if err != nil || r.value != "" {
		t.Fatalf("parseRecord of a record of an earlier release = %+v, %v", r, err)
	}
	if got := string(r.encode()); got != old {
		t.Fatalf("a record without a value encodes as %s; want %s", got, old)
	}
}

func TestParseRecordRefusesCorruption(t *testing.T) {
	t.Parallel()
	for _, tc := range objlocktest.BadRecords {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			_, err := parseRecord("k", []byte(tc.Data))
			if ce, ok := errors.AsType[*fence.CorruptError](err); !ok || ce.Key != "k" || !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("parseRecord(%s) = %v; want a *fence.CorruptError for key k", tc.Data, err)
			}
			if errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseRecord(%s) = %v, which matches fence.ErrInvalid; a corrupted record is not bad input", tc.Data, err)
			}
		})
	}
	_, err := parseRecord("k", make([]byte, MaxRecordLen+1))
	if !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("parseRecord of %d bytes = %v; want an error matching ErrCorrupt", MaxRecordLen+1, err)
	}
}

// FuzzParseRecord checks that parsing never panics, refuses with a
// CorruptError only, and that whatever it accepts encodes to a record that
// parses back the same.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(record{held: true, owner: "o", token: 7, ttl: time.Second, expires: time.Unix(100, 0), write: "w"}.encode()))
	f.Add([]byte(record{owner: "o", token: math.MaxUint64, ttl: 1, write: "w"}.encode()))
	for _, tc := range objlocktest.BadRecords {
		f.Add([]byte(tc.Data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRecord("k", data)
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseRecord(%q) = %v; want an error matching ErrCorrupt and not ErrInvalid", data, err)
			}
			return
		}
		if !r.token.Valid() || r.owner == "" || r.ttl <= 0 || r.write == "" {
			t.Fatalf("parseRecord(%q) accepted %+v, which breaks a record's invariants", data, r)
		}
		again, err := parseRecord("k", r.encode())
		if err != nil {
			t.Fatalf("the encoding of accepted %+v does not parse: %v", r, err)
		}
		if !again.expires.Equal(r.expires) {
			t.Fatalf("expiry %v came back as %v", r.expires, again.expires)
		}
		again.expires, r.expires = time.Time{}, time.Time{}
		if again != r {
			t.Fatalf("record %+v came back as %+v", r, again)
		}
	})
}
