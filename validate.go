package fence

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ValidateKey checks a lock key or resource name: non-empty, at most maxLen
// bytes, valid UTF-8, and free of NUL bytes (which several stores cannot
// hold). field names it in the error ("key", "name"). A violation returns a
// *InvalidError. Backends call it first and add their own rules after.
func ValidateKey(field, key string, maxLen int) error {
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

// ValidateTTL checks that min <= ttl <= max and returns a *InvalidError
// naming the range otherwise.
func ValidateTTL(ttl, min, max time.Duration) error {
	if ttl < min || ttl > max {
		return &InvalidError{Field: "ttl", Reason: fmt.Sprintf("%v is outside the range %v to %v", ttl, min, max)}
	}
	return nil
}

// ValidateToken rejects the zero Token with a *InvalidError.
func ValidateToken(t Token) error {
	if t == 0 {
		return &InvalidError{Field: "token", Reason: "token 0 is never valid"}
	}
	return nil
}

// ValidateLease checks the parts of a lease that Renew and Release rely on.
func ValidateLease(l Lease, maxKeyLen int) error {
	if err := ValidateKey("key", l.Key, maxKeyLen); err != nil {
		return err
	}
	if l.Owner == "" {
		return &InvalidError{Field: "owner", Reason: "empty"}
	}
	if err := ValidateToken(l.Token); err != nil {
		return err
	}
	if l.TTL <= 0 {
		return &InvalidError{Field: "ttl", Reason: fmt.Sprintf("%v is not positive", l.TTL)}
	}
	return nil
}
