package azblob

import (
	"fmt"
	"strings"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// The metadata names the package reserves on a blob (sent as
// x-ms-meta-<name> headers). Azure metadata names are case-insensitive
// and the SDK hands them back capitalised ("Fencetoken"), so they are
// looked up without regard to case. They are the names every fence
// backend gives these fields.
const (
	// MetaToken holds the token of the write, in decimal.
	MetaToken = "fencetoken"
	// MetaWriteID holds the random id of the write, by which a write whose
	// answer was lost is recognised when read back.
	MetaWriteID = "fencewriteid"
	// MetaTombstone is "true" on the tombstone a Delete leaves.
	MetaTombstone = "fencetombstone"
)

// The metadata names of a lock blob of lockers/azblob besides MetaToken.
// A blob carrying them is a lock, not a value: the package refuses it
// rather than write a value over a lock's record.
const (
	lockOwner = "fenceowner"
	lockTTL   = "fencettl"
)

// maxMetadataLen is Azure's limit on the metadata of one blob: names and
// values together, in bytes.
const maxMetadataLen = 8 << 10

// reserved reports whether k is one of the package's metadata names, or
// one of a lock blob's.
func reserved(k string) bool {
	return fencedobj.IsKey(k) || strings.EqualFold(k, lockOwner) || strings.EqualFold(k, lockTTL)
}

// parseMeta reads the fence metadata of the blob of key (see
// fencedobj.Parse, which also matches names without regard to case, as
// Azure does). A write id that is not 32 lower-case hex digits is a
// *fence.CorruptError too. A lock blob of lockers/azblob (one with an
// owner or a TTL) gets a *fence.InvalidError: the key names a lock.
func parseMeta(key string, md map[string]*string) (fencedobj.Record, error) {
	plain := make(map[string]string, len(md))
	for k, v := range md {
		plain[k] = ""
		if v != nil {
			plain[k] = *v
		}
	}
	for _, name := range []string{lockOwner, lockTTL} {
		if _, found, _ := fencedobj.Lookup(plain, name); found {
			return fencedobj.Record{}, &fence.InvalidError{Field: "key", Reason: fmt.Sprintf(
				"names a lock blob of lockers/azblob (it has %s metadata); keep fenced values apart from locks, in another container or under Options.Prefix", name)}
		}
	}
	r, err := fencedobj.Parse(key, plain)
	if err != nil {
		return fencedobj.Record{}, err
	}
	if _, hasID, _ := fencedobj.Lookup(plain, MetaWriteID); hasID && !fencedobj.ValidWriteID(r.WriteID) {
		return fencedobj.Record{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("metadata %s is %q, not %d hex digits", MetaWriteID, r.WriteID, fencedobj.WriteIDLen)}
	}
	return r, nil
}

// formatMeta returns the metadata of a write: the caller's, which
// checkUserMeta has accepted, and the package's names, as the SDK takes
// them.
func formatMeta(user map[string]string, r fencedobj.Record) map[string]*string {
	md := make(map[string]*string, len(user)+3)
	for k, v := range r.Format(user) {
		md[k] = &v
	}
	return md
}

// checkUserMeta refuses caller metadata that uses a reserved name, a name
// that is not a C# identifier (Azure's rule), a value that an HTTP header
// does not carry unchanged, or that, with the package's names, exceeds
// Azure's 8 KiB.
func checkUserMeta(user map[string]string) error {
	n := len(MetaToken) + 20 + len(MetaWriteID) + fencedobj.WriteIDLen + len(MetaTombstone) + len("true")
	for k, v := range user {
		if reserved(k) {
			return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("name %q is reserved for the fence", k)}
		}
		if !identifier(k) {
			return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("name %q is not a C# identifier (ASCII letters, digits and '_', not starting with a digit), as Azure requires", k)}
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c > 0x7e {
				return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("value of %q: byte %#x at %d is not printable ASCII", k, c, i)}
			}
		}
		if v != strings.TrimSpace(v) {
			return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("value of %q starts or ends with a space, which HTTP drops", k)}
		}
		n += len(k) + len(v)
	}
	if n > maxMetadataLen {
		return &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("%d bytes with the fence's names, more than Azure's limit of %d", n, maxMetadataLen)}
	}
	return nil
}

// identifier reports whether k is an ASCII C# identifier.
func identifier(k string) bool {
	if k == "" || '0' <= k[0] && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// userMeta returns md without the package's names, as plain strings.
func userMeta(md map[string]*string) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		if !reserved(k) && v != nil {
			out[k] = *v
		}
	}
	return out
}
