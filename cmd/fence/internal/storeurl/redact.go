package storeurl

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a password in printed URLs.
const Mask = "xxxxx"

// redact returns u with its password, and a password query parameter,
// replaced by Mask.
func redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), Mask)
		}
	}
	if q, err := url.ParseQuery(c.RawQuery); err == nil && q.Has("password") {
		q.Set("password", Mask)
		c.RawQuery = q.Encode()
	} else if err != nil {
		c.RawQuery = passwordParam.ReplaceAllString(c.RawQuery, "${1}"+Mask)
	}
	return c.String()
}

var (
	// userinfoPassword matches scheme://user:password@ in any text.
	userinfoPassword = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)
	// passwordParam matches password=... in a query or key/value string.
	passwordParam = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|[^&\s]+)`)
)

// redactUnparsed masks what looks like a password in raw, a URL that did
// not parse.
func redactUnparsed(raw string) string {
	raw = userinfoPassword.ReplaceAllString(raw, "${1}"+Mask+"@")
	return passwordParam.ReplaceAllString(raw, "${1}"+Mask)
}

// Scrub removes secrets from text before it is printed: every occurrence
// of the given secrets (such as Spec.Password, raw and URL-escaped), and
// anything shaped like a URL password or a password parameter.
func Scrub(text string, secrets ...string) string {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		text = strings.ReplaceAll(text, s, Mask)
		if e := url.QueryEscape(s); e != s {
			text = strings.ReplaceAll(text, e, Mask)
		}
		if e := url.PathEscape(s); e != s {
			text = strings.ReplaceAll(text, e, Mask)
		}
	}
	return redactUnparsed(text)
}
