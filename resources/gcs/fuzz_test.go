package gcs

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// FuzzParseMeta feeds parseMeta metadata maps built from arbitrary keys and
// values: it never panics, every refusal is a *fence.CorruptError, and
// whatever it accepts has a valid token that reads back the same through
// fencedobj.Record.Format.
func FuzzParseMeta(f *testing.F) {
	f.Add("fencetoken", "12", "fencetombstone", "true", "fencewriteid", "abc")
	f.Add("fencetoken", "seven", "", "", "", "")
	f.Add("FenceToken", "18446744073709551615", "fencetoken", "1", "x", "y")
	f.Add("fencetoken", "0", "fencetombstone", "yes", "", "")
	f.Add("fencetoken", "+1", "FENCETOMBSTONE", "true", "other", "v")
	f.Add("fencetoken", "18446744073709551616", "", "", "", "")
	f.Add("fence-token", "12", "", "", "", "")
	f.Add("owner", "me", "", "", "", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		meta := map[string]string{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k3, v3}} {
			if kv[0] != "" {
				meta[kv[0]] = kv[1]
			}
		}
		rec, err := parseMeta("fuzzed", meta)
		if err != nil {
			var ce *fence.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("parseMeta(%q) = %v; want a *fence.CorruptError", meta, err)
			}
			return
		}
		if !rec.Token.Valid() {
			t.Fatalf("parseMeta(%q) accepted token 0", meta)
		}
		again, err := parseMeta("fuzzed", rec.Format(nil))
		if err != nil || again.Token != rec.Token || again.Tombstone != rec.Tombstone || again.WriteID != rec.WriteID {
			t.Fatalf("round trip of %+v = %+v, %v", rec, again, err)
		}
	})
}

func TestParseMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc      string
		meta      map[string]string
		token     fence.Token
		tombstone bool
		ok        bool
	}{
		{"value", map[string]string{MetaToken: "42", MetaWriteID: "w"}, 42, false, true},
		{"tombstone", map[string]string{MetaToken: "42", MetaTombstone: "true"}, 42, true, true},
		{"keys in header case", map[string]string{"Fencetoken": "7", "FenceTombstone": "true"}, 7, true, true},
		{"largest token", map[string]string{MetaToken: "18446744073709551615"}, 1<<64 - 1, false, true},
		{"user keys beside", map[string]string{MetaToken: "3", "fence": "x", "token": "y"}, 3, false, true},
		{"same key twice in different case", map[string]string{MetaToken: "7", "FenceToken": "8"}, 0, false, false},
		// The names before fencetoken are not read: without the token
		// under its name, the object is corrupt.
		{"the old names", map[string]string{"fence-token": "7", "fence-write-id": "w"}, 0, false, false},
		{"missing", map[string]string{"other": "1"}, 0, false, false},
		{"hex", map[string]string{MetaToken: "0x10"}, 0, false, false},
		{"leading plus", map[string]string{MetaToken: "+5"}, 0, false, false},
		{"trailing newline", map[string]string{MetaToken: "5\n"}, 0, false, false},
		{"tombstone false", map[string]string{MetaToken: "5", MetaTombstone: "false"}, 0, false, false},
	} {
		rec, err := parseMeta("n", tc.meta)
		if !tc.ok {
			if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Errorf("%s: parseMeta = %+v, %v; want ErrCorrupt and not ErrInvalid", tc.desc, rec, err)
			}
			continue
		}
		if err != nil || rec.Token != tc.token || rec.Tombstone != tc.tombstone {
			t.Errorf("%s: parseMeta = token %d tombstone %v, %v; want %d %v", tc.desc, rec.Token, rec.Tombstone, err, tc.token, tc.tombstone)
		}
	}
}

// TestMetaNames: the package's names are the keys fencedobj reads and writes.
func TestMetaNames(t *testing.T) {
	if MetaToken != fencedobj.KeyToken || MetaWriteID != fencedobj.KeyWriteID || MetaTombstone != fencedobj.KeyTombstone || !strings.HasPrefix(MetaToken+MetaWriteID+MetaTombstone, MetaPrefix) {
		t.Errorf("names %s %s %s; fencedobj's keys %s %s %s", MetaToken, MetaWriteID, MetaTombstone, fencedobj.KeyToken, fencedobj.KeyWriteID, fencedobj.KeyTombstone)
	}
}
