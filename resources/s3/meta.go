package s3

import (
	"fmt"
	"strings"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// The user metadata keys the package reserves (S3 sends them as
// x-amz-meta-<key> headers and hands them back in lower case). They are
// the names every fence backend gives these fields, without a dash, which
// Azure's metadata cannot hold.
const (
	// MetaToken holds the token of the write, in decimal.
	MetaToken = "fencetoken"
	// MetaWriteID holds the random id of the write, by which an ambiguous
	// write is recognised when read back.
	MetaWriteID = "fencewriteid"
	// MetaTombstone is "true" on the tombstone a Delete leaves.
	MetaTombstone = "fencetombstone"
	// MetaClaimed is "true" on a value that a Claim rewrote: its body is
	// the value followed by the claim's write id, so that its ETag is new.
	MetaClaimed = "fenceclaimed"
)

// maxMetadataLen is S3's limit on the user metadata of one object: keys and
// values together, in bytes. Keys are counted with their x-amz-meta-
// prefix (metaHeaderPrefix): S3's documentation does not say whether the
// prefix counts, and MinIO counts it.
const maxMetadataLen = 2048

// metaHeaderPrefix is the prefix of the header that carries each user
// metadata key.
const metaHeaderPrefix = "x-amz-meta-"

// meta is what the package reads from an object's user metadata: the
// fence record, and the claimed marker that only S3 needs.
type meta struct {
	fencedobj.Record
	claimed bool // the body ends with WriteID (see MetaClaimed)
}

// reserved reports whether k is one of the package's metadata keys.
func reserved(k string) bool { return fencedobj.IsKey(k) || strings.EqualFold(k, MetaClaimed) }

// parseMeta reads the fence metadata of the object key (see
// fencedobj.Parse). A claimed marker other than "true", or on an object
// without a token, on a tombstone or with a write id that is not
// fencedobj.WriteIDLen bytes, is a *fence.CorruptError too.
func parseMeta(key string, md map[string]string) (meta, error) {
	r, err := fencedobj.Parse(key, md)
	if err != nil {
		return meta{}, err
	}
	claimed, hasClaimed, err := fencedobj.Lookup(md, MetaClaimed)
	switch {
	case err != nil:
		return meta{}, &fence.CorruptError{Key: key, Reason: "bad fence metadata", Err: err}
	case !hasClaimed:
		return meta{Record: r}, nil
	case r.Token == 0:
		return meta{}, &fence.CorruptError{Key: key, Reason: "fence metadata without " + MetaToken}
	case claimed != "true" || r.Tombstone || len(r.WriteID) != fencedobj.WriteIDLen:
		return meta{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("metadata %s is %q on an object with tombstone %v and a write id of %d bytes", MetaClaimed, claimed, r.Tombstone, len(r.WriteID))}
	}
	return meta{Record: r, claimed: true}, nil
}

// formatMeta returns the user metadata of a write: the caller's, which
// checkUserMeta has accepted, and the package's keys.
func formatMeta(user map[string]string, m meta) map[string]string {
	md := m.Format(user)
	if m.claimed {
		md[MetaClaimed] = "true"
	}
	return md
}

// checkUserMeta refuses caller metadata that uses a reserved key or that,
// with the package's keys, exceeds S3's 2 KB limit, every key counted
// with its header prefix.
func checkUserMeta(user map[string]string) error {
	n := 4*len(metaHeaderPrefix) + len(MetaToken) + 20 + len(MetaWriteID) + fencedobj.WriteIDLen + len(MetaTombstone) + len("true") + len(MetaClaimed) + len("true")
	for k, v := range user {
		if reserved(k) {
			return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("key %q is reserved for the fence", k)}
		}
		if k == "" {
			return &fence.InvalidError{Field: "metadata", Reason: "empty key"}
		}
		n += len(metaHeaderPrefix) + len(k) + len(v)
	}
	if n > maxMetadataLen {
		return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("%d bytes with the fence's keys, more than S3's limit of %d", n, maxMetadataLen)}
	}
	return nil
}

// userMeta returns md without the package's keys.
func userMeta(md map[string]string) map[string]string {
	return fencedobj.UserMeta(md, func(k string) bool { return strings.EqualFold(k, MetaClaimed) })
}
