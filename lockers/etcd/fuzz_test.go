package etcd

import (
	"testing"
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
