// Package redact hides passwords in URLs and in texts that quote them.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// userinfoPassword matches scheme://user:password@ in any text.
var userinfoPassword = regexp.MustCompile(`(://[^:/@?#\s]*:)[^/?#\s]*@`)

// passwordParam matches a password= query parameter in any text.
var passwordParam = regexp.MustCompile(`(?i)([?&]password\s*=\s*)('[^']*'|[^&\s]+)`)

// URL returns raw, or any text holding URLs, with every password (in
// the user information or a password query parameter) replaced by
// "xxxxx", fit for printing.
func URL(raw string) string {
	raw = userinfoPassword.ReplaceAllString(raw, "${1}xxxxx@")
	return passwordParam.ReplaceAllString(raw, "${1}xxxxx")
}

// Passwords returns the non-empty passwords u carries: in its user
// information and in password query parameters.
func Passwords(u *url.URL) []string {
	var pws []string
	if pw, ok := u.User.Password(); ok && pw != "" {
		pws = append(pws, pw)
	}
	for _, pw := range u.Query()["password"] {
		if pw != "" {
			pws = append(pws, pw)
		}
	}
	return pws
}

// Scrub returns text with every secret replaced by "xxxxx", as given and
// in the forms URLs escape it, and then with anything else shaped like a
// URL password redacted (URL). Empty secrets are ignored. Openers
// pass their URL's passwords (Passwords) through it before quoting an
// SDK's error, which may hold the connection string.
func Scrub(text string, secrets ...string) string {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
		if _, esc, ok := strings.Cut(url.UserPassword("", s).String(), ":"); ok {
			forms = append(forms, esc)
		}
		for _, f := range forms {
			text = strings.ReplaceAll(text, f, "xxxxx")
		}
	}
	return URL(text)
}
