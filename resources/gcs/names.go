package gcs

import (
	"fmt"
	"strings"

	"github.com/fencekit/fence"
)

// MaxKeyLen is the longest object name Cloud Storage accepts, in bytes of
// UTF-8. With Options.Prefix, the longest key is MaxKeyLen minus the
// prefix's length.
const MaxKeyLen = 1024

// reservedStart starts the object names Cloud Storage refuses.
const reservedStart = ".well-known/acme-challenge/"

// objectName returns the object name of key, prefix + key, after the
// rules of Cloud Storage that the portable layer's checks (length, UTF-8,
// NUL) do not cover: no carriage return or line feed, not "." or "..",
// not under .well-known/acme-challenge/. A refusal is a
// *fence.InvalidError for the key.
func (b *bucket) objectName(key string) (string, error) {
	name := b.prefix + key
	var reason string
	switch {
	case strings.ContainsAny(key, "\r\n"):
		reason = "contains a carriage return or line feed"
	case name == "." || name == "..":
		reason = fmt.Sprintf("%q is not an object name", name)
	case strings.HasPrefix(name, reservedStart):
		reason = fmt.Sprintf("object names cannot start with %q", reservedStart)
	default:
		return name, nil
	}
	return "", &fence.InvalidError{Field: "key", Reason: reason}
}
