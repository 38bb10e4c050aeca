package s3

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
	"github.com/fencekit/fence/internal/testing/emulators"
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
			key := emulators.UniqueName("corrupt-")
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

// TestParseMetaClaimed covers what the package reads beside the fence
// record (fencedobj's tests cover the record): the claimed marker.
func TestParseMetaClaimed(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("a1", fencedobj.WriteIDLen/2)
	for _, tc := range []struct {
		desc    string
		md      map[string]string
		want    meta
		corrupt bool
	}{
		{"value", map[string]string{MetaToken: "7", MetaWriteID: id}, meta{Record: fencedobj.Record{Token: 7, WriteID: id}}, false},
		{"claimed", map[string]string{MetaToken: "7", MetaWriteID: id, MetaClaimed: "true"}, meta{Record: fencedobj.Record{Token: 7, WriteID: id}, claimed: true}, false},
		{"claimed in another case", map[string]string{"FenceToken": "7", MetaWriteID: id, "FenceClaimed": "true"}, meta{Record: fencedobj.Record{Token: 7, WriteID: id}, claimed: true}, false},
		{"claimed alone", map[string]string{MetaClaimed: "true"}, meta{}, true},
		{"claimed marker not true", map[string]string{MetaToken: "7", MetaWriteID: id, MetaClaimed: "yes"}, meta{}, true},
		{"claimed tombstone", map[string]string{MetaToken: "7", MetaWriteID: id, MetaTombstone: "true", MetaClaimed: "true"}, meta{}, true},
		{"claimed with a short write id", map[string]string{MetaToken: "7", MetaWriteID: "w", MetaClaimed: "true"}, meta{}, true},
		{"claimed spelt twice", map[string]string{MetaToken: "7", MetaWriteID: id, MetaClaimed: "true", "FenceClaimed": "false"}, meta{}, true},
		{"bad token beside a claimed marker", map[string]string{MetaToken: "0", MetaWriteID: id, MetaClaimed: "true"}, meta{}, true},
	} {
		got, err := parseMeta("k", tc.md)
		if tc.corrupt {
			if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Errorf("%s: parseMeta(%v) = %+v, %v; want ErrCorrupt and not ErrInvalid", tc.desc, tc.md, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: parseMeta(%v) = %+v, %v; want %+v", tc.desc, tc.md, got, err, tc.want)
		}
		if back, err := parseMeta("k", formatMeta(userMeta(tc.md), got)); err != nil || back != got {
			t.Errorf("%s: formatMeta(%+v) parses back as %+v, %v", tc.desc, got, back, err)
		}
	}
}

// TestMetaNames: the package's names are the keys fencedobj reads and writes.
func TestMetaNames(t *testing.T) {
	if MetaToken != fencedobj.KeyToken || MetaWriteID != fencedobj.KeyWriteID || MetaTombstone != fencedobj.KeyTombstone {
		t.Errorf("names %s %s %s; fencedobj's keys %s %s %s", MetaToken, MetaWriteID, MetaTombstone, fencedobj.KeyToken, fencedobj.KeyWriteID, fencedobj.KeyTombstone)
	}
}
