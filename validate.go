package fence

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// validateKey checks a lock key or resource name: non-empty, at most maxLen
// bytes, valid UTF-8, and free of NUL bytes (which several stores cannot
// hold). field names it in the error ("key", "name"). A violation returns a
// *InvalidError. driver.ValidateKey is this function, for backends.
func validateKey(field, key string, maxLen int) error {
	switch {
	case key == "":
		return &InvalidError{Field: field, Reason: "empty"}
	case len(key) > maxLen:
		return &InvalidError{Field: field, Reason: fmt.Sprintf("%d bytes, more than the limit of %d", len(key), maxLen)}
	case !utf8.ValidString(key):
		return &InvalidError{Field: field, Reason: "not valid UTF-8"}
	case strings.IndexByte(key, 0) >= 0:
		return &InvalidError{Field: field, Reason: "contains a NUL byte"}
	}
	return nil
}

// validateTTL checks that min <= ttl <= max and returns a *InvalidError
// naming the range otherwise.
func validateTTL(ttl, min, max time.Duration) error {
	if ttl < min || ttl > max {
		return &InvalidError{Field: "ttl", Reason: fmt.Sprintf("%v is outside the range %v to %v", ttl, min, max)}
	}
	return nil
}

// validateToken rejects the zero Token with a *InvalidError.
func validateToken(t Token) error {
	if t == 0 {
		return &InvalidError{Field: "token", Reason: "token 0 is never valid"}
	}
	return nil
}

// validateLease checks the parts of a lease that Renew and Release rely on.
func validateLease(l Lease, maxKeyLen int) error {
	if err := validateKey("key", l.Key, maxKeyLen); err != nil {
		return err
	}
	if l.Owner == "" {
		return &InvalidError{Field: "owner", Reason: "empty"}
	}
	if err := validateToken(l.Token); err != nil {
		return err
	}
	if l.TTL <= 0 {
		return &InvalidError{Field: "ttl", Reason: fmt.Sprintf("%v is not positive", l.TTL)}
	}
	return nil
}
