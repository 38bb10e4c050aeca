package gcs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// acmePrefix starts object names that Cloud Storage refuses.
const acmePrefix = ".well-known/acme-challenge/"

// checkPrefix applies Cloud Storage's rules for object names to a prefix
// on its own: the rules on the whole name are checked with each key.
func checkPrefix(prefix string) error {
	switch {
	case len(prefix) >= MaxObjectNameLen:
		return &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("%d bytes leaves no room for a key in an object name of at most %d", len(prefix), MaxObjectNameLen)}
	case !utf8.ValidString(prefix):
		return &fence.InvalidError{Field: "Prefix", Reason: "not valid UTF-8"}
	case strings.ContainsAny(prefix, "\r\n\x00"):
		return &fence.InvalidError{Field: "Prefix", Reason: "contains a carriage return, line feed or NUL"}
	}
	return nil
}

// objectName returns the name of key's object, prefix + key, after the
// rules of Cloud Storage that the portable layer does not know: no
// carriage return or line feed, not "." or "..", not under
// .well-known/acme-challenge/. The layer has checked the rest (1 to
// MaxObjectNameLen-len(prefix) bytes of UTF-8, no NUL).
func (d *store) objectName(key string) (string, error) {
	if strings.ContainsAny(key, "\r\n") {
		return "", &fence.InvalidError{Field: "key", Reason: "contains a carriage return or line feed, which object names cannot hold"}
	}
	name := d.prefix + key
	switch {
	case name == "." || name == "..":
		return "", &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("the object name %q is not allowed", name)}
	case strings.HasPrefix(name, acmePrefix):
		return "", &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("object names may not start with %q", acmePrefix)}
	}
	return name, nil
}
