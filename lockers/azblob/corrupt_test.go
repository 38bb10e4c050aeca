package azblob

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// TestCorruptMetadata checks records corrupted by hand through the SDK:
// Acquire and Inspect answer ErrCorrupt and not ErrInvalid (the record is
// at fault, not the caller's input), Acquire writes nothing and takes no
// lease, and Break still works.
func TestCorruptMetadata(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	owner := fence.NewOwnerID()
	tests := []struct {
		name string
		meta map[string]*string
	}{
		{"token not a number", metaOf(metaToken, "seven", metaOwner, owner, metaTTL, "15")},
		{"negative token", metaOf(metaToken, "-3", metaOwner, owner, metaTTL, "15")},
		{"no token", metaOf(metaOwner, owner, metaTTL, "15")},
		{"no metadata", metaOf()},
		{"token without an owner", metaOf(metaToken, "3", metaTTL, "15")},
		{"TTL out of range", metaOf(metaToken, "3", metaOwner, owner, metaTTL, "600")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			first := mustAcquire(t, l, key(t), MinTTL, nil)
			if err := l.Release(t.Context(), first); err != nil {
				t.Fatalf("Release: %v", err)
			}
			b := l.d.c.NewBlobClient(first.Key)
			set, err := b.SetMetadata(t.Context(), tt.meta, nil)
			if err != nil {
				t.Fatalf("SetMetadata: %v", err)
			}
			_, err = l.Acquire(t.Context(), first.Key, MinTTL, nil)
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok || errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("Acquire: %v; want a *fence.CorruptError that does not match fence.ErrInvalid", err)
			}
			if _, err := l.Inspect(t.Context(), first.Key); !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("Inspect: %v; want an error matching fence.ErrCorrupt and not fence.ErrInvalid", err)
			}
			resp, err := b.GetProperties(t.Context(), nil)
			if err != nil {
				t.Fatalf("GetProperties: %v", err)
			}
			if *resp.ETag != *set.ETag || *resp.LeaseState != "available" {
				t.Fatalf("after a refused Acquire the blob has ETag %s and lease state %s; want %s and available (nothing written)",
					*resp.ETag, *resp.LeaseState, *set.ETag)
			}
			if err := l.Break(t.Context(), first.Key); err != nil {
				t.Fatalf("Break of a corrupted key: %v", err)
			}
		})
	}
}
