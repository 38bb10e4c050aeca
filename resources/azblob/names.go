package azblob

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// maxNameChars is Azure's limit on a blob name, in characters.
const maxNameChars = 1024

// blobName returns the blob name of name (the prefix and the key): name
// itself, with the characters that Azure or HTTP would change written as
// escapes, so that two names never share one blob. Each byte of those
// characters becomes '~' and two upper-case hex digits: '~' itself, a
// backslash (which Azure reads as '/'), control characters and the
// non-characters U+FFFE and U+FFFF, a '.' that ends a path segment (Azure
// strips it, and "." and ".." segments are removed by URL handling), and
// a '/' that would leave an empty segment (at the start, at the end, or
// after another '/'). Every other name is used verbatim. As every '~' is
// escaped, no two names give one blob name. A result of more than 1024
// characters or 254 segments, Azure's limits, is refused with a
// *fence.InvalidError for field.
func blobName(field, name string) (string, error) {
	if !needsEscape(name) {
		if err := nameLimits(field, name); err != nil {
			return "", err
		}
		return name, nil
	}
	var b strings.Builder
	for i, r := range name {
		size := utf8.RuneLen(r)
		last := i+size == len(name)
		esc := false
		switch {
		case r == '~' || r == '\\' || unicode.IsControl(r) || r == '\uFFFE' || r == '\uFFFF':
			esc = true
		case r == '.':
			esc = last || name[i+1] == '/'
		case r == '/':
			out := b.String()
			esc = out == "" || strings.HasSuffix(out, "/") || last
		}
		if !esc {
			b.WriteRune(r)
			continue
		}
		for _, c := range []byte(name[i : i+size]) {
			fmt.Fprintf(&b, "~%02X", c)
		}
	}
	out := b.String()
	if err := nameLimits(field, out); err != nil {
		return "", err
	}
	return out, nil
}

// needsEscape reports whether blobName changes name.
func needsEscape(name string) bool {
	if name == "" || name[0] == '/' || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "//") || strings.Contains(name, "./") || strings.ContainsAny(name, "~\\\uFFFE\uFFFF") {
		return true
	}
	return strings.IndexFunc(name, unicode.IsControl) >= 0
}

// nameLimits checks Azure's limits on a blob name.
func nameLimits(field, name string) error {
	if n := utf8.RuneCountInString(name); n > maxNameChars {
		return &fence.InvalidError{Field: field, Reason: fmt.Sprintf("a blob name of %d characters with its escapes, more than Azure's limit of %d", n, maxNameChars)}
	}
	if n := strings.Count(name, "/") + 1; n > maxSegments {
		return &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%d path segments, more than Azure's limit of %d", n, maxSegments)}
	}
	return nil
}
