package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// checkSet checks the caller's SET clause of a fenced UPDATE, which refers
// to its nargs arguments as $1..$nargs. It refuses anything that could
// reach past the assignments and weaken the fence condition appended
// after them: a semicolon, a comment, a top-level WHERE, FROM or
// RETURNING, unbalanced parentheses or quotes; and placeholders other than
// $1..$nargs (the fence's own follow), ? placeholders, backquotes and
// backslashes (pass such values as arguments). Quoted text ('...' and "...") is
// skipped. It returns a *fence.InvalidError.
func checkSet(set string, nargs int) error {
	bad := func(format string, a ...any) error {
		return &fence.InvalidError{Field: "set clause", Reason: fmt.Sprintf(format, a...)}
	}
	if !utf8.ValidString(set) {
		return bad("not valid UTF-8")
	}
	depth := 0
	for i := 0; i < len(set); {
		c := set[i]
		switch {
		case c == '\'' || c == '"':
			end := closingQuote(set, i)
			if end < 0 {
				return bad("unterminated %c quote at byte %d", c, i)
			}
			i = end + 1
			continue
		case c == '\\':
			return bad("backslash at byte %d; pass such values as arguments", i)
		case c == '`':
			return bad("backquote at byte %d; quote identifiers with double quotes", i)
		case c == ';':
			return bad("semicolon at byte %d", i)
		case c == '-' && i+1 < len(set) && set[i+1] == '-', c == '/' && i+1 < len(set) && set[i+1] == '*':
			return bad("comment at byte %d", i)
		case c == '?':
			return bad("? at byte %d; use $1..$%d", i, nargs)
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return bad("unbalanced ) at byte %d", i)
			}
			depth--
		case c == '$':
			j := i + 1
			for j < len(set) && set[j] >= '0' && set[j] <= '9' {
				j++
			}
			n, ok := placeholder(set[i+1 : j])
			if !ok || n > nargs {
				return bad("%q at byte %d is not one of $1..$%d", set[i:j], i, nargs)
			}
			i = j
			continue
		case isIdentStart(c):
			j := i + 1
			// A $ inside an identifier (PostgreSQL allows one) is read as
			// a placeholder here, which can only refuse more.
			for j < len(set) && (isIdentStart(set[j]) || set[j] >= '0' && set[j] <= '9') {
				j++
			}
			if w := strings.ToUpper(set[i:j]); depth == 0 && (w == "WHERE" || w == "FROM" || w == "RETURNING") {
				return bad("%s at byte %d; the fence adds the WHERE clause", w, i)
			}
			i = j
			continue
		}
		i++
	}
	if depth != 0 {
		return bad("unbalanced (")
	}
	return nil
}

// closingQuote returns the index of the quote closing the one at set[i],
// where a doubled quote stands for itself, or -1.
func closingQuote(set string, i int) int {
	q := set[i]
	for j := i + 1; j < len(set); j++ {
		if set[j] != q {
			continue
		}
		if j+1 < len(set) && set[j+1] == q {
			j++
			continue
		}
		return j
	}
	return -1
}

// placeholder parses the digits of a $n placeholder: 1 to 5 digits, no
// leading zero.
func placeholder(digits string) (int, bool) {
	if digits == "" || len(digits) > 5 || digits[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		n = n*10 + int(digits[i]-'0')
	}
	return n, true
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
