package azblob

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// A blob whose fence metadata is corrupt gets an error matching
// fence.ErrCorrupt (and not fence.ErrInvalid) from every method, and
// nothing is written over it.
func TestCorruptMetadata(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	r := testResource(t, c, fastOptions)
	id := strings.Repeat("ab", 16)
	for _, tc := range []struct {
		name string
		md   map[string]string
	}{
		{"token not a number", map[string]string{MetaToken: "seven"}},
		{"token 0", map[string]string{MetaToken: "0"}},
		{"token above 2^64-1", map[string]string{MetaToken: "18446744073709551616"}},
		{"negative token", map[string]string{MetaToken: "-1"}},
		{"tombstone not true", map[string]string{MetaToken: "3", MetaTombstone: "yes"}},
		{"write id without token", map[string]string{MetaWriteID: id}},
		{"tombstone without token", map[string]string{MetaTombstone: "true"}},
		{"short write id", map[string]string{MetaToken: "3", MetaWriteID: "abc"}},
		{"upper-case write id", map[string]string{MetaToken: "3", MetaWriteID: strings.ToUpper(id)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := key(t)
			md := map[string]*string{}
			for name, v := range tc.md {
				md[name] = &v
			}
			etag, err := upload(t, c.NewBlockBlobClient(k), "data", md, nil)
			if err != nil {
				t.Fatal(err)
			}
			calls := map[string]func() error{
				"Put":     func() error { return r.Put(t.Context(), k, 100, []byte("x")) },
				"Get":     func() error { _, _, err := r.Get(t.Context(), k); return err },
				"Delete":  func() error { return r.Delete(t.Context(), k, 100) },
				"Highest": func() error { _, err := r.Highest(t.Context(), k); return err },
				"Claim":   func() error { return r.Claim(t.Context(), k, 100) },
				"GetBlob": func() error { _, err := GetBlob(t.Context(), r, k); return err },
			}
			for name, call := range calls {
				err := call()
				if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
					t.Errorf("%s: %v; want an error matching fence.ErrCorrupt only", name, err)
				}
			}
			props, err := c.NewBlobClient(k).GetProperties(t.Context(), nil)
			if err != nil || etagOf(props.ETag) != etag {
				t.Fatalf("the corrupt blob after the calls: ETag %s, %v; want %s, unchanged", etagOf(props.ETag), err, etag)
			}
		})
	}
}
