package gcs

import (
	"strings"

	"github.com/fencekit/fence"
)

// MaxKeyLen is the longest object name Cloud Storage accepts, in bytes of
// UTF-8.
const MaxKeyLen = 1024

// ValidateName checks an object name against the rules of Cloud Storage:
// 1 to MaxKeyLen bytes of valid UTF-8, no NUL, carriage return or line
// feed, and not "." or "..". A bad name gets a *fence.InvalidError.
func ValidateName(name string) error {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return err
	}
	switch {
	case strings.ContainsAny(name, "\r\n"):
		return &fence.InvalidError{Field: "name", Reason: "contains a carriage return or line feed"}
	case name == "." || name == "..":
		return &fence.InvalidError{Field: "name", Reason: `"." and ".." are not object names`}
	}
	return nil
}
