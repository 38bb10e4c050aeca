package azblob

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// FuzzParseMeta: any metadata parses to a record, a *fence.CorruptError
// or, for a lock blob's, a *fence.InvalidError, never a panic; a record parsed formats back to
// metadata that parses to the same record.
func FuzzParseMeta(f *testing.F) {
	f.Add("Fencetoken", "7", "fencewriteid", strings.Repeat("a1", 16), "fencetombstone", "true")
	f.Add("fencetoken", "0", "", "", "", "")
	f.Add("FENCETOKEN", "18446744073709551616", "fencetoken", "3", "x", "y")
	f.Add("fencetombstone", "true", "other", "v", "", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		md := map[string]*string{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k3, v3}} {
			if kv[0] != "" {
				v := kv[1]
				md[kv[0]] = &v
			}
		}
		m, err := parseMeta("k", md)
		if err != nil {
			if errors.Is(err, fence.ErrInvalid) {
				// A lock blob's metadata.
				if !reserved(k1) && !reserved(k2) && !reserved(k3) {
					t.Fatalf("parseMeta(%v): %v; an invalid-key error for no lock metadata", md, err)
				}
				return
			}
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Fatalf("parseMeta(%v): %v; want a *fence.CorruptError only", md, err)
			}
			return
		}
		if m.Token == 0 {
			return // unfenced: nothing of the fence's to format
		}
		back, err := parseMeta("k", formatMeta(nil, m))
		if err != nil || back != m {
			t.Fatalf("parseMeta(formatMeta(%+v)) = %+v, %v", m, back, err)
		}
	})
}

// unescape reverses blobName.
func unescape(t *testing.T, name string) string {
	var b []byte
	for i := 0; i < len(name); i++ {
		if name[i] != '~' {
			b = append(b, name[i])
			continue
		}
		if i+2 >= len(name) {
			t.Fatalf("a '~' without two hex digits in %q", name)
		}
		v, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
		if err != nil {
			t.Fatalf("bad escape in %q: %v", name, err)
		}
		b = append(b, byte(v))
		i += 2
	}
	return string(b)
}

// FuzzBlobName: an accepted name escapes to a blob name that Azure keeps
// as it is (no backslash, control character, empty segment or segment
// ending in '.') and that unescapes to the name, so no two names share a
// blob.
func FuzzBlobName(f *testing.F) {
	for _, s := range []string{"a", "a.", "a/./b", "//", "x~2E", `a\b`, "a\tb", "名前.", "a\uFFFE", "/", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !utf8.ValidString(name) || name == "" || strings.ContainsRune(name, 0) {
			return // refused by the portable layer before
		}
		out, err := blobName("key", name)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("blobName(%q): %v; want fence.ErrInvalid", name, err)
			}
			return
		}
		if got := unescape(t, out); got != name {
			t.Fatalf("blobName(%q) = %q, which unescapes to %q", name, out, got)
		}
		if strings.ContainsRune(out, '\\') || strings.IndexFunc(out, unicode.IsControl) >= 0 || strings.ContainsAny(out, "\uFFFE\uFFFF") {
			t.Fatalf("blobName(%q) = %q holds a character Azure changes", name, out)
		}
		for seg := range strings.SplitSeq(out, "/") {
			if seg == "" || strings.HasSuffix(seg, ".") {
				t.Fatalf("blobName(%q) = %q has the segment %q, which Azure changes", name, out, seg)
			}
		}
	})
}

// TestMetaNames: the package's names are the keys fencedobj reads and writes.
func TestMetaNames(t *testing.T) {
	if MetaToken != fencedobj.KeyToken || MetaWriteID != fencedobj.KeyWriteID || MetaTombstone != fencedobj.KeyTombstone {
		t.Errorf("names %s %s %s; fencedobj's keys %s %s %s", MetaToken, MetaWriteID, MetaTombstone, fencedobj.KeyToken, fencedobj.KeyWriteID, fencedobj.KeyTombstone)
	}
}
