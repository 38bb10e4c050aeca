package azblob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fencekit/fence"
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

// meta is what the package reads from a blob's metadata.
type meta struct {
	token     fence.Token // 0: a blob written without fencing
	writeID   string
	tombstone bool
}

// reserved reports whether k is one of the package's metadata names, or
// one of a lock blob's.
func reserved(k string) bool {
	return strings.EqualFold(k, MetaToken) || strings.EqualFold(k, MetaWriteID) || strings.EqualFold(k, MetaTombstone) ||
		strings.EqualFold(k, lockOwner) || strings.EqualFold(k, lockTTL)
}

// lookup returns the value of k in md, matching names without regard to
// case as Azure does. Two spellings of k with different values are an
// error.
func lookup(md map[string]*string, k string) (string, bool, error) {
	var (
		v     string
		found bool
	)
	for mk, mv := range md {
		if !strings.EqualFold(mk, k) {
			continue
		}
		s := ""
		if mv != nil {
			s = *mv
		}
		if found && s != v {
			return "", false, fmt.Errorf("metadata %q appears twice with different values", k)
		}
		v, found = s, true
	}
	return v, found, nil
}

// parseMeta reads the fence metadata of the blob of key. A blob with none
// of it is an unfenced blob (token 0). A token that does not parse or is
// 0, a tombstone marker other than "true", a write id that is not 32
// lower-case hex digits, or a write id or marker without a token is a
// *fence.CorruptError. A lock blob of lockers/azblob (one with an owner
// or a TTL) gets a *fence.InvalidError: the key names a lock.
func parseMeta(key string, md map[string]*string) (meta, error) {
	corrupt := func(reason string, err error) (meta, error) {
		return meta{}, &fence.CorruptError{Key: key, Reason: reason, Err: err}
	}
	for _, name := range []string{lockOwner, lockTTL} {
		if _, found, _ := lookup(md, name); found {
			return meta{}, &fence.InvalidError{Field: "key", Reason: fmt.Sprintf(
				"names a lock blob of lockers/azblob (it has %s metadata); keep fenced values apart from locks, in another container or under Options.Prefix", name)}
		}
	}
	tok, hasTok, err := lookup(md, MetaToken)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	id, hasID, err := lookup(md, MetaWriteID)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	tomb, hasTomb, err := lookup(md, MetaTombstone)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	if !hasTok {
		if hasID || hasTomb {
			return corrupt("fence metadata without "+MetaToken, nil)
		}
		return meta{}, nil
	}
	t, err := fence.ParseToken(tok)
	if err != nil {
		// The stored record is corrupt, not the caller's input: keep the
		// parser's reason, not its *fence.InvalidError.
		if ie, ok := errors.AsType[*fence.InvalidError](err); ok {
			err = errors.New(ie.Reason)
		}
		return corrupt(fmt.Sprintf("metadata %s is %q", MetaToken, tok), err)
	}
	if hasTomb && tomb != "true" {
		return corrupt(fmt.Sprintf("metadata %s is %q, not \"true\"", MetaTombstone, tomb), nil)
	}
	if hasID && !validWriteID(id) {
		return corrupt(fmt.Sprintf("metadata %s is %q, not %d hex digits", MetaWriteID, id, writeIDLen), nil)
	}
	return meta{token: t, writeID: id, tombstone: hasTomb}, nil
}

// validWriteID reports whether id is a write id as newWriteID makes them.
func validWriteID(id string) bool {
	if len(id) != writeIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// formatMeta returns the metadata of a write: the caller's, which
// checkUserMeta has accepted, and the package's names.
func formatMeta(user map[string]string, m meta) map[string]*string {
	md := make(map[string]*string, len(user)+3)
	for k, v := range user {
		md[k] = &v
	}
	tok, id := m.token.String(), m.writeID
	md[MetaToken] = &tok
	if id != "" {
		md[MetaWriteID] = &id
	}
	if m.tombstone {
		t := "true"
		md[MetaTombstone] = &t
	}
	return md
}

// checkUserMeta refuses caller metadata that uses a reserved name, a name
// that is not a C# identifier (Azure's rule), a value that an HTTP header
// does not carry unchanged, or that, with the package's names, exceeds
// Azure's 8 KiB.
func checkUserMeta(user map[string]string) error {
	n := len(MetaToken) + 20 + len(MetaWriteID) + writeIDLen + len(MetaTombstone) + len("true")
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
