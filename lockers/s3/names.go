package s3

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// badBucketName says what is wrong with a bucket name, "" when nothing
// is. It checks only what any S3 bucket name obeys (S3 itself decides
// the rest, which differ between general purpose, directory and legacy
// buckets): 1 to 255 bytes, no slash, space or control character.
func badBucketName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > 255:
		return "is longer than 255 bytes"
	}
	for _, c := range []byte(name) {
		if c == '/' || c <= ' ' || c == 0x7f {
			return "may not hold a slash, space or control character"
		}
	}
	return ""
}

// checkPrefix checks a prefix on its own: the rules on the whole object
// key are checked with each key.
func checkPrefix(prefix string) error {
	switch {
	case len(prefix) >= MaxObjectKeyLen:
		return &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("%d bytes leaves no room for a key in an object key of at most %d", len(prefix), MaxObjectKeyLen)}
	case !utf8.ValidString(prefix):
		return &fence.InvalidError{Field: "Prefix", Reason: "not valid UTF-8"}
	case strings.ContainsRune(prefix, 0):
		return &fence.InvalidError{Field: "Prefix", Reason: "contains a NUL"}
	}
	return nil
}

// maxKeyLen returns the longest key under prefix: MaxObjectKeyLen
// minus the prefix, and with a segment limit seg (when positive) no more
// than fits in the prefix's last segment, so that a key of any form
// fits. It returns a *fence.InvalidError when the prefix itself breaks
// the segment limit.
func maxKeyLen(prefix string, seg int) (int, error) {
	n := MaxObjectKeyLen - len(prefix)
	if seg <= 0 {
		return n, nil
	}
	parts := strings.Split(prefix, "/")
	for _, p := range parts[:len(parts)-1] {
		if len(p) > seg {
			return 0, &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("a segment of %d bytes between slashes, more than MaxKeySegmentLen %d", len(p), seg)}
		}
	}
	last := parts[len(parts)-1]
	if len(last) >= seg {
		return 0, &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("its last segment of %d bytes leaves no room for a key within MaxKeySegmentLen %d", len(last), seg)}
	}
	return min(n, seg-len(last)), nil
}

// objectKey returns the object key of key, prefix + key. The portable
// layer has checked the key: 1 to maxKeyLen bytes of UTF-8, no NUL.
func (d *store) objectKey(key string) (string, error) {
	return d.prefix + key, nil
}
