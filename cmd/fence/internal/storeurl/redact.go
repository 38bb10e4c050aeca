package storeurl

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a password in printed URLs.
const Mask = "xxxxx"

var (
	// userinfoPassword matches scheme://user:password@ in any text, up
	// to the last @ of the authority (which ends at '/', '?' or '#'), as
	// net/url reads it.
	userinfoPassword = regexp.MustCompile(`(://[^:/@?#\s]*:)[^/?#\s]*@`)
	// passwordParam matches password=... in a query or key/value string.
	passwordParam = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|[^&\s]+)`)
)

// redactUnparsed masks what looks like a password in raw, a URL, parsed
// or not, keeping the rest as written.
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
