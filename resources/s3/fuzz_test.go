package s3

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

// FuzzParseMeta feeds arbitrary fence metadata to the parser: it never
// panics, fails only with a *fence.CorruptError, never accepts token 0,
// and what formatMeta writes parses back to the same.
func FuzzParseMeta(f *testing.F) {
	for _, s := range [][3]string{
		{"1", "", ""}, {"18446744073709551615", "w", "true"}, {"0", "", ""}, {"abc", "", ""},
		{"", "w", ""}, {"-1", "", ""}, {"18446744073709551616", "", ""}, {"7", "", "yes"}, {"٣", "", ""},
	} {
		f.Add(s[0], s[1], s[2], true)
	}
	f.Fuzz(func(t *testing.T, token, writeID, tomb string, withToken bool) {
		md := map[string]string{MetaWriteID: writeID, MetaTombstone: tomb}
		if withToken {
			md[MetaToken] = token
		}
		m, err := parseMeta("k", md)
		if err != nil {
			var ce *fence.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("parseMeta(%v): %v is not a *fence.CorruptError", md, err)
			}
			return
		}
		if !m.token.Valid() {
			t.Fatalf("parseMeta(%v) accepted token 0", md)
		}
		back, err := parseMeta("k", formatMeta(map[string]string{"user": token}, m))
		if err != nil || back != m {
			t.Fatalf("formatMeta(%+v) parses back as %+v, %v", m, back, err)
		}
	})
}
