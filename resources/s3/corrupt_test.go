package s3

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// TestCorruptMetadataIsRefusedAndKept writes objects whose fence metadata
// was corrupted by hand (a raw PutObject) and checks that every method
// returns an error matching fence.ErrCorrupt and that the object is left
// exactly as it was.
func TestCorruptMetadataIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		desc string
		md   map[string]string
	}{
		{"non-numeric token", map[string]string{MetaToken: "abc"}},
		{"token 0", map[string]string{MetaToken: "0"}},
		{"negative token", map[string]string{MetaToken: "-1"}},
		{"token over 64 bits", map[string]string{MetaToken: "18446744073709551616"}},
		{"token with a sign", map[string]string{MetaToken: "+5"}},
		{"token in hex", map[string]string{MetaToken: "0x10"}},
		{"write id without a token", map[string]string{MetaWriteID: "0123456789abcdef0123456789abcdef"}},
		{"tombstone without a token", map[string]string{MetaTombstone: "true"}},
		{"tombstone marker not true", map[string]string{MetaToken: "5", MetaTombstone: "yes"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			key := uniqueName("corrupt-")
			e.rawPut(t, key, []byte("original"), tc.md)
			before := e.rawGet(t, key)
			ctx := t.Context()
			checks := map[string]error{}
			checks["Put"] = e.b.Put(ctx, key, 9, []byte("over it"))
			checks["Delete"] = e.b.Delete(ctx, key, 9)
			_, _, checks["Get"] = e.b.Get(ctx, key)
			_, checks["Highest"] = e.b.Highest(ctx, key)
			_, checks["GetObject"] = GetObject(ctx, e.b, key)
			for method, err := range checks {
				var ce *fence.CorruptError
				if !errors.Is(err, fence.ErrCorrupt) || !errors.As(err, &ce) {
					t.Errorf("%s on metadata %v: %v; want a *fence.CorruptError", method, tc.md, err)
				} else if errors.Is(err, fence.ErrInvalid) {
					t.Errorf("%s on metadata %v: %v matches fence.ErrInvalid; a corrupted record is not bad input", method, tc.md, err)
				} else if ce.Key != key {
					t.Errorf("%s: CorruptError.Key = %q, want %q", method, ce.Key, key)
				}
			}
			after := e.rawGet(t, key)
			if !bytes.Equal(after.body, before.body) || after.etag != before.etag || !maps.Equal(after.md, before.md) {
				t.Errorf("object changed: before %q %s %v, after %q %s %v", before.body, before.etag, before.md, after.body, after.etag, after.md)
			}
		})
	}
}

// TestParseMeta covers the metadata parser case by case, including what a
// server could not carry in a header (empty values, two spellings of one
// key).
func TestParseMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc    string
		md      map[string]string
		want    meta
		corrupt bool
	}{
		{"no metadata: unfenced", nil, meta{}, false},
		{"only user metadata: unfenced", map[string]string{"owner": "me"}, meta{}, false},
		{"token", map[string]string{MetaToken: "7"}, meta{token: 7}, false},
		{"token and write id", map[string]string{MetaToken: "7", MetaWriteID: "w"}, meta{token: 7, writeID: "w"}, false},
		{"tombstone", map[string]string{MetaToken: "7", MetaTombstone: "true"}, meta{token: 7, tombstone: true}, false},
		{"keys in another case", map[string]string{"FenceToken": "7", "FENCETOMBSTONE": "true"}, meta{token: 7, tombstone: true}, false},
		{"largest token", map[string]string{MetaToken: "18446744073709551615"}, meta{token: 18446744073709551615}, false},
		{"two spellings agreeing", map[string]string{MetaToken: "7", "FenceToken": "7"}, meta{token: 7}, false},
		{"two spellings disagreeing", map[string]string{MetaToken: "7", "FenceToken": "8"}, meta{}, true},
		{"empty token", map[string]string{MetaToken: ""}, meta{}, true},
		{"token with spaces", map[string]string{MetaToken: " 7"}, meta{}, true},
		{"token 0", map[string]string{MetaToken: "0"}, meta{}, true},
		{"token 00", map[string]string{MetaToken: "00"}, meta{}, true},
		{"tombstone marker empty", map[string]string{MetaToken: "7", MetaTombstone: ""}, meta{}, true},
		{"write id alone", map[string]string{MetaWriteID: "w"}, meta{}, true},
		// The names before fencetoken are not read: such an object is
		// unfenced.
		{"the old names", map[string]string{"fence-token": "7", "fence-write": "w", "fence-tombstone": "true"}, meta{}, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			got, err := parseMeta("k", tc.md)
			if tc.corrupt {
				if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
					t.Fatalf("parseMeta(%v) = %+v, %v; want ErrCorrupt and not ErrInvalid", tc.md, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseMeta(%v) = %+v, %v; want %+v", tc.md, got, err, tc.want)
			}
		})
	}
}

// TestCorruptTokenKeepsTheReason: a token that does not parse is reported
// with the parser's reason, as a corrupted record only.
func TestCorruptTokenKeepsTheReason(t *testing.T) {
	t.Parallel()
	_, err := parseMeta("k", map[string]string{MetaToken: "0x10"})
	if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("parseMeta of token 0x10 = %v; want ErrCorrupt and not ErrInvalid", err)
	}
	if want := `"0x10" is not a decimal token`; !strings.Contains(err.Error(), want) {
		t.Errorf("parseMeta of token 0x10 = %v; want the reason %s", err, want)
	}
}
