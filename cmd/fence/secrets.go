package main

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
)

// passwords returns the passwords the store URL raw carries, in its user
// information or in password query parameters, whichever backend it names.
//
// A URL that net/url cannot parse gets an error matching fence.ErrInvalid
// that does not show it: fence.OpenLocker would quote it through
// fence.RedactURL, and where a password ends in a malformed URL (one
// holding '@', say) cannot be told reliably.
func passwords(raw string) ([]string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // without the URL it repeats
		}
		return nil, &fence.InvalidError{Field: "store URL", Reason: fmt.Sprintf("it cannot be parsed: %v", err)}
	}
	return redact.Passwords(u), nil
}

// scrub returns text without the secrets of c, as given and in the forms
// URLs escape them, and without anything else shaped like a URL password.
func (c *cli) scrub(text string) string { return redact.Scrub(text, c.secrets...) }
