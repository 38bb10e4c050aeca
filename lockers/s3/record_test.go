package s3

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []record{
		{held: true, owner: "o", token: 1, ttl: MinTTL, write: "w"},
		{held: true, owner: "é名", token: math.MaxUint64, ttl: MaxTTL, expires: time.Unix(1, 5), write: newWriteID()},
		{owner: fence.NewOwnerID(), token: 42, ttl: time.Nanosecond, write: newWriteID()},
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

// badRecords are objects no Locker wrote: each must be refused as corrupt.
var badRecords = []struct{ name, data string }{
	{"empty", ``},
	{"not JSON", `held by me`},
	{"JSON array", `[1,2]`},
	{"JSON null", `null`},
	{"truncated", `{"v":1,"state":"held","owner":"o","token":"3"`},
	{"trailing data", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"} {}`},
	{"unknown field", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","x":1}`},
	{"missing token", `{"v":1,"state":"held","owner":"o","ttl_ns":3000000000,"write":"w"}`},
	{"missing owner", `{"v":1,"state":"held","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"missing state", `{"v":1,"owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"missing version", `{"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"missing ttl", `{"v":1,"state":"held","owner":"o","token":"3","write":"w"}`},
	{"missing write id", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000}`},
	{"future version", `{"v":2,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"zero token", `{"v":1,"state":"held","owner":"o","token":"0","ttl_ns":3000000000,"write":"w"}`},
	{"negative token", `{"v":1,"state":"held","owner":"o","token":"-1","ttl_ns":3000000000,"write":"w"}`},
	{"token as a number", `{"v":1,"state":"held","owner":"o","token":3,"ttl_ns":3000000000,"write":"w"}`},
	{"non-numeric token", `{"v":1,"state":"held","owner":"o","token":"three","ttl_ns":3000000000,"write":"w"}`},
	{"token over 64 bits", `{"v":1,"state":"held","owner":"o","token":"18446744073709551616","ttl_ns":3000000000,"write":"w"}`},
	{"unknown state", `{"v":1,"state":"taken","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"empty owner", `{"v":1,"state":"held","owner":"","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"zero ttl", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":0,"write":"w"}`},
	{"negative ttl", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":-5,"write":"w"}`},
	{"ttl over the limit", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":86400000000001,"write":"w"}`},
	{"fractional ttl", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":1.5,"write":"w"}`},
	{"empty write id", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":""}`},
	{"negative expiry", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","expires_unix_ns":-1}`},
	{"free with an expiry", `{"v":1,"state":"free","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","expires_unix_ns":5}`},
}

func TestParseRecordRefusesCorruption(t *testing.T) {
	t.Parallel()
	for _, tc := range badRecords {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseRecord("k", []byte(tc.data))
			if ce, ok := errors.AsType[*fence.CorruptError](err); !ok || ce.Key != "k" || !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("parseRecord(%s) = %v; want a *fence.CorruptError for key k", tc.data, err)
			}
			if errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseRecord(%s) = %v, which matches fence.ErrInvalid; a corrupted record is not bad input", tc.data, err)
			}
		})
	}
	_, err := parseRecord("k", make([]byte, maxRecordLen+1))
	if !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("parseRecord of %d bytes = %v; want an error matching ErrCorrupt", maxRecordLen+1, err)
	}
}

// FuzzParseRecord checks that parsing never panics, refuses with a
// CorruptError only, and that whatever it accepts encodes to a record that
// parses back the same.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(record{held: true, owner: "o", token: 7, ttl: MinTTL, expires: time.Unix(100, 0), write: "w"}.encode()))
	f.Add([]byte(record{owner: "o", token: math.MaxUint64, ttl: 1, write: "w"}.encode()))
	for _, tc := range badRecords {
		f.Add([]byte(tc.data))
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
