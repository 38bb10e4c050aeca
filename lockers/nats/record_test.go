package nats

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		r        record
		implicit bool
		rev      uint64
	}{
		{"acquired", record{held: true, owner: "o", ttl: time.Second}, true, 7},
		{"renewed", record{held: true, owner: "o", token: 7, ttl: time.Second, value: "\x00\xff addr"}, false, 9},
		{"free", record{owner: "o", token: 7, ttl: time.Second}, false, 10},
	} {
		got, err := parseRecord("k", c.r.encode(c.implicit), c.rev)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := c.r
		want.revision = c.rev
		if c.implicit {
			want.token = fence.Token(c.rev)
		}
		if got != want {
			t.Errorf("%s: parsed %+v; want %+v", c.name, got, want)
		}
	}
}

func TestCorruptRecords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data string
		rev  uint64
	}{
		{``, 5},
		{`x`, 5},
		{`{}`, 5},
		{`{"v":2,"state":"held","owner":"o","ttl_ns":1}`, 5},
		{`{"v":1,"state":"gone","owner":"o","ttl_ns":1}`, 5},
		{`{"v":1,"state":"held","owner":"","ttl_ns":1}`, 5},
		{`{"v":1,"state":"held","owner":"o","ttl_ns":0}`, 5},
		{`{"v":1,"state":"held","owner":"o","ttl_ns":1,"extra":1}`, 5},
		{`{"v":1,"state":"held","owner":"o","ttl_ns":1} {}`, 5},
		{`{"v":1,"state":"free","owner":"o","ttl_ns":1}`, 5},                            // free without a token
		{`{"v":1,"state":"free","owner":"o","token":"3","ttl_ns":1,"value":"eA=="}`, 5}, // free with a value
		{`{"v":1,"state":"held","owner":"o","token":"5","ttl_ns":1}`, 5},                // token not below the revision
		{`{"v":1,"state":"held","owner":"o","token":"0","ttl_ns":1}`, 5},
		{`{"v":1,"state":"held","owner":"o","token":"-1","ttl_ns":1}`, 5},
		{`{"v":1,"state":"held","owner":"o","ttl_ns":1}`, 0},
		{`{"v":1,"state":"held","owner":"o\u0000","ttl_ns":1}`, 5},
		{`{"v":1,"state":"held","owner":"` + strings.Repeat("o", MaxOwnerLen+1) + `","ttl_ns":1}`, 5},
		{strings.Repeat(" ", maxRecordLen+1), 5},
	} {
		_, err := parseRecord("k", []byte(c.data), c.rev)
		if !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("parseRecord(%.60q, %d) = %v; want an error matching fence.ErrCorrupt", c.data, c.rev, err)
		}
		if errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseRecord(%.60q) = %v; a stored record is not the caller's input (ErrInvalid)", c.data, err)
		}
	}
}

// FuzzParseRecord: the parser never panics, refuses with fence.ErrCorrupt
// only, and what it accepts encodes to a record it parses the same.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"v":1,"state":"held","owner":"o","ttl_ns":1000000000}`), uint64(3))
	f.Add([]byte(`{"v":1,"state":"held","owner":"o","token":"2","ttl_ns":1000000000,"value":"aGk="}`), uint64(3))
	f.Add([]byte(`{"v":1,"state":"free","owner":"o","token":"2","ttl_ns":1}`), uint64(9))
	f.Add([]byte(`{"v":1,"state":"held","owner":"o","token":"18446744073709551615","ttl_ns":1}`), uint64(1<<63))
	f.Add([]byte(`null`), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, rev uint64) {
		r, err := parseRecord("k", data, rev)
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("parseRecord: %v; want an error matching fence.ErrCorrupt", err)
			}
			return
		}
		if r.token == 0 || uint64(r.token) > rev || r.revision != rev {
			t.Fatalf("parsed token %d, revision %d from an entry of revision %d", r.token, r.revision, rev)
		}
		again, err := parseRecord("k", r.encode(uint64(r.token) == rev), rev)
		if err != nil || again != r {
			t.Fatalf("re-encoded %+v parses as %+v, %v", r, again, err)
		}
	})
}
