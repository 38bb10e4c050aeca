package etcd

import (
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/fencekit/fence"
)

// FuzzParseRecord: parsing never panics; a value it accepts is exactly the
// encoding of the owner it returns, and every owner the portable layer
// accepts survives encoding and parsing.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{"", recordPrefix, encodeRecord("owner"), encodeRecord("é名 x"), "fence0:x", recordPrefix + "\x00", recordPrefix + "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		owner, err := parseRecord("k", value)
		if err != nil {
			if owner != "" {
				t.Fatalf("parseRecord(%q) returned owner %q with error %v", value, owner, err)
			}
			return
		}
		if got := encodeRecord(owner); got != string(value) {
			t.Fatalf("parseRecord(%q) = %q, which encodes as %q", value, owner, got)
		}
		again, err := parseRecord("k", []byte(encodeRecord(owner)))
		if err != nil || again != owner {
			t.Fatalf("owner %q did not survive encoding: %q, %v", owner, again, err)
		}
	})
}

// FuzzParseValue: parsing a value record never panics; a record it
// accepts is exactly the encoding of the token and value it returns, and
// any value up to fence.MaxValueLen survives encoding and parsing.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"", recordPrefix, encodeValue(7, "v"), encodeValue(1, ""), encodeValue(9, "a:b\x00\xff"), recordPrefix + "0:v", recordPrefix + "07:v", recordPrefix + "18446744073709551616:v"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		token, value, err := parseValue("k", &mvccpb.KeyValue{Value: data})
		if err != nil {
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Fatalf("parseValue(%q): %v is not a *fence.CorruptError", data, err)
			}
			return
		}
		if got := encodeValue(token, value); got != string(data) {
			t.Fatalf("parseValue(%q) = %d, %q, which encodes as %q", data, token, value, got)
		}
		if len(data) <= fence.MaxValueLen {
			v := string(data)
			t2, again, err := parseValue("k", &mvccpb.KeyValue{Value: []byte(encodeValue(3, v))})
			if err != nil || t2 != 3 || again != v {
				t.Fatalf("value %q did not survive encoding: %d, %q, %v", v, t2, again, err)
			}
		}
	})
}
