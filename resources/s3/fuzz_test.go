package s3

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// FuzzParseMeta feeds arbitrary fence metadata, with the claimed marker,
// to the parser: it never panics, fails only with a *fence.CorruptError,
// never accepts token 0, and what formatMeta writes parses back to the
// same. fencedobj's FuzzParse covers the record alone.
func FuzzParseMeta(f *testing.F) {
	for _, s := range [][4]string{
		{"1", "", "", ""}, {"18446744073709551615", "w", "true", ""}, {"0", "", "", "true"}, {"abc", "", "", ""},
		{"7", strings.Repeat("0", 32), "", "true"}, {"7", "w", "", "true"}, {"7", strings.Repeat("0", 32), "true", "true"},
	} {
		f.Add(s[0], s[1], s[2], s[3], true)
	}
	f.Fuzz(func(t *testing.T, token, writeID, tomb, claimed string, withToken bool) {
		md := map[string]string{MetaWriteID: writeID, MetaTombstone: tomb, MetaClaimed: claimed}
		if withToken {
			md[MetaToken] = token
		}
		m, err := parseMeta("k", md)
		if err != nil {
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Fatalf("parseMeta(%v): %v is not a *fence.CorruptError", md, err)
			}
			return
		}
		if !m.Token.Valid() {
			t.Fatalf("parseMeta(%v) accepted token 0", md)
		}
		back, err := parseMeta("k", formatMeta(map[string]string{"user": token}, m))
		if err != nil || back != m {
			t.Fatalf("formatMeta(%+v) parses back as %+v, %v", m, back, err)
		}
	})
}
