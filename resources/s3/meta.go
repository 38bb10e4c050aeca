package s3

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fencekit/fence"
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

// meta is what the package reads from an object's user metadata.
type meta struct {
	token     fence.Token // 0: an object written without fencing
	writeID   string
	tombstone bool
	claimed   bool // the body ends with writeID (see MetaClaimed)
}

// reserved reports whether k is one of the package's metadata keys.
func reserved(k string) bool {
	return strings.EqualFold(k, MetaToken) || strings.EqualFold(k, MetaWriteID) || strings.EqualFold(k, MetaTombstone) || strings.EqualFold(k, MetaClaimed)
}

// lookup returns the value of k in md, matching keys without regard to
// case as S3 does. Two spellings of k with different values are an error.
func lookup(md map[string]string, k string) (string, bool, error) {
	v, found := md[k]
	for mk, mv := range md {
		if mk == k || !strings.EqualFold(mk, k) {
			continue
		}
		if found && mv != v {
			return "", false, fmt.Errorf("metadata %q appears twice with different values", k)
		}
		v, found = mv, true
	}
	return v, found, nil
}

// parseMeta reads the fence metadata of the object key. An object with none
// of it is an unfenced object (token 0). A token that does not parse or is
// 0, a tombstone marker other than "true", or a write id or marker without
// a token is a *fence.CorruptError.
func parseMeta(key string, md map[string]string) (meta, error) {
	corrupt := func(reason string, err error) (meta, error) {
		return meta{}, &fence.CorruptError{Key: key, Reason: reason, Err: err}
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
	claimed, hasClaimed, err := lookup(md, MetaClaimed)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	if !hasTok {
		if hasID || hasTomb || hasClaimed {
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
	if hasClaimed && (claimed != "true" || hasTomb || len(id) != writeIDLen) {
		return corrupt(fmt.Sprintf("metadata %s is %q on an object with tombstone %v and a write id of %d bytes", MetaClaimed, claimed, hasTomb, len(id)), nil)
	}
	return meta{token: t, writeID: id, tombstone: hasTomb, claimed: hasClaimed}, nil
}

// formatMeta returns the user metadata of a write: the caller's, which
// checkUserMeta has accepted, and the package's keys.
func formatMeta(user map[string]string, m meta) map[string]string {
	md := make(map[string]string, len(user)+3)
	for k, v := range user {
		md[k] = v
	}
	md[MetaToken] = m.token.String()
	md[MetaWriteID] = m.writeID
	if m.tombstone {
		md[MetaTombstone] = "true"
	}
	if m.claimed {
		md[MetaClaimed] = "true"
	}
	return md
}

// checkUserMeta refuses caller metadata that uses a reserved key or that,
// with the package's keys, exceeds S3's 2 KB limit, every key counted
// with its header prefix.
func checkUserMeta(user map[string]string) error {
	n := 4*len(metaHeaderPrefix) + len(MetaToken) + 20 + len(MetaWriteID) + writeIDLen + len(MetaTombstone) + len("true") + len(MetaClaimed) + len("true")
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
	out := make(map[string]string, len(md))
	for k, v := range md {
		if !reserved(k) {
			out[k] = v
		}
	}
	return out
}
