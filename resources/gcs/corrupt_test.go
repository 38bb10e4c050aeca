package gcs

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// TestCorruptedMetadataIsRefusedAndKept writes objects whose fence metadata
// someone edited by hand: every method reports fence.ErrCorrupt and the
// object keeps its generation (nothing is written over it).
func TestCorruptedMetadataIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil))
	r := testResource(t, bucket, fastOptions)
	for _, tc := range []struct {
		desc string
		meta map[string]string
		body string
	}{
		{"no token", map[string]string{"owner": "someone"}, "x"},
		{"no metadata at all", nil, "x"},
		{"non-numeric token", map[string]string{MetaToken: "seven"}, "x"},
		{"empty token", map[string]string{MetaToken: ""}, "x"},
		{"token 0", map[string]string{MetaToken: "0"}, "x"},
		{"negative token", map[string]string{MetaToken: "-3"}, "x"},
		{"token with spaces", map[string]string{MetaToken: " 3"}, "x"},
		{"token over 64 bits", map[string]string{MetaToken: "18446744073709551616"}, "x"},
		{"bad tombstone marker", map[string]string{MetaToken: "3", MetaTombstone: "yes"}, ""},
		{"tombstone with content", map[string]string{MetaToken: "3", MetaTombstone: "true"}, "x"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			key := "corrupt/" + tc.desc
			w := bucket.Object(key).NewWriter(t.Context())
			w.ChunkSize, w.Metadata = 0, tc.meta
			_, _ = w.Write([]byte(tc.body))
			if err := w.Close(); err != nil {
				t.Fatalf("writing the corrupted object: %v", err)
			}
			gen := w.Attrs().Generation

			wantCorrupt := func(method string, err error) {
				t.Helper()
				var ce *fence.CorruptError
				if !errors.Is(err, fence.ErrCorrupt) || !errors.As(err, &ce) || ce.Key != key {
					t.Errorf("%s = %v; want a *fence.CorruptError for %q", method, err, key)
				}
				if errors.Is(err, fence.ErrInvalid) {
					t.Errorf("%s = %v matches fence.ErrInvalid; a corrupted record is not bad input", method, err)
				}
			}
			wantCorrupt("Put", r.Put(t.Context(), key, 9, []byte("over it")))
			wantCorrupt("Delete", r.Delete(t.Context(), key, 9))
			_, err := Upload(t.Context(), r, key, 9, nil, nil)
			wantCorrupt("Upload", err)
			_, _, err = r.Get(t.Context(), key)
			wantCorrupt("Get", err)
			_, err = r.Highest(t.Context(), key)
			wantCorrupt("Highest", err)

			attrs, err := bucket.Object(key).Attrs(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if attrs.Generation != gen {
				t.Errorf("generation = %d after the refused writes; want %d (untouched)", attrs.Generation, gen)
			}
		})
	}
}

// TestUnfencedOverwriteIsCaught: an object replaced by an unfenced writer
// (no metadata) is refused, not silently fenced again.
func TestUnfencedOverwriteIsCaught(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil))
	r := testResource(t, bucket, fastOptions)
	mustPut(t, r, "overwritten", 5, []byte("five"))
	w := bucket.Object("overwritten").NewWriter(t.Context())
	w.ChunkSize = 0
	_, _ = w.Write([]byte("plain"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(t.Context(), "overwritten", 3, []byte("three")); !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("Put over an unfenced overwrite = %v; want ErrCorrupt", err)
	}
}

// TestCorruptTokenKeepsTheReason: a token that does not parse is reported
// with the parser's reason, as a corrupted record only.
func TestCorruptTokenKeepsTheReason(t *testing.T) {
	t.Parallel()
	_, err := parseMeta("n", map[string]string{MetaToken: "0x10"})
	if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("parseMeta of token 0x10 = %v; want ErrCorrupt and not ErrInvalid", err)
	}
	if want := `"0x10" is not a decimal token`; !strings.Contains(err.Error(), want) {
		t.Errorf("parseMeta of token 0x10 = %v; want the reason %s", err, want)
	}
}
