package azblob

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/fencekit/fence"
)

// blobName checks that key, which the portable Locker checked already
// (driver.ValidateKey), can be a blob name that Azure stores as given.
// Keys are used verbatim as blob names (readable in Azure's tools), so
// names that the service or HTTP would change, and two keys would then
// share one blob, are refused with a *fence.InvalidError instead (see the
// package doc, "Keys"): control characters and the non-characters U+FFFE
// and U+FFFF, a backslash, an empty path segment, a segment "." or "..",
// or one ending in '.', and more than maxSegments segments.
func blobName(key string) error {
	for _, r := range key {
		switch {
		case r == '\\':
			return &fence.InvalidError{Field: "key", Reason: "contains a backslash, which Azure reads as '/'"}
		case unicode.IsControl(r):
			return &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("contains the control character %U, which Azure blob names must not hold", r)}
		case r == '\uFFFE' || r == '\uFFFF':
			return &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("contains the non-character %U", r)}
		}
	}
	segments := strings.Split(key, "/")
	if len(segments) > maxSegments {
		return &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("%d path segments, more than Azure's limit of %d", len(segments), maxSegments)}
	}
	for _, s := range segments {
		switch {
		case s == "":
			return &fence.InvalidError{Field: "key", Reason: "has an empty path segment (a leading or trailing '/', or \"//\"), which Azure folds"}
		case s == "." || s == "..":
			return &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("has the path segment %q, which URL handling removes", s)}
		case strings.HasSuffix(s, "."):
			return &fence.InvalidError{Field: "key", Reason: "has a path segment ending in '.', which Azure may strip"}
		}
	}
	return nil
}

// ownerChars checks the rule on owner ids beyond the portable Locker's
// (1 to MaxOwnerLen bytes): printable ASCII without leading or trailing
// spaces, the values an HTTP header (and so Azure metadata) carries
// unchanged.
func ownerChars(owner string) error {
	for i := 0; i < len(owner); i++ {
		if c := owner[i]; c < 0x20 || c > 0x7e {
			return &fence.InvalidError{Field: "owner", Reason: fmt.Sprintf("byte %#x at %d is not printable ASCII, which Azure metadata cannot hold", c, i)}
		}
	}
	if owner != "" && (owner[0] == ' ' || owner[len(owner)-1] == ' ') {
		return &fence.InvalidError{Field: "owner", Reason: "starts or ends with a space, which HTTP drops"}
	}
	return nil
}

// wholeSeconds checks the rule on lease durations beyond the
// portable Locker's (MinTTL to MaxTTL): a whole number of seconds.
func wholeSeconds(ttl time.Duration) error {
	if ttl%time.Second != 0 {
		return &fence.InvalidError{Field: "ttl", Reason: fmt.Sprintf("%v is not a whole number of seconds, as Azure leases are", ttl)}
	}
	return nil
}

// checkInput checks a key, owner and TTL that the portable Locker checked
// against the limits of its driver.Info by the rules of Azure on top.
func checkInput(key, owner string, ttl time.Duration) error {
	if err := blobName(key); err != nil {
		return err
	}
	if err := ownerChars(owner); err != nil {
		return err
	}
	return wholeSeconds(ttl)
}
