package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// checkSet checks the caller's SET clause of a fenced UPDATE in dialect
// d, which refers to its nargs arguments as $1..$nargs. It refuses
// anything that could reach past the assignments and weaken the fence
// condition appended after them: a semicolon, a comment, a top-level
// WHERE, FROM or RETURNING, unbalanced parentheses or quotes; and
// placeholders other than $1..$nargs (the fence's own follow), ?
// placeholders, backquotes and backslashes (pass such values as
// arguments). Quoted text ('...' and "...") is skipped. In MySQL the
// placeholders are ?, exactly nargs of them outside quotes ($ is refused),
// backquoted names are skipped like quoted text, and # (a comment there)
// is refused. It returns a *fence.InvalidError.
func checkSet(d Dialect, set string, nargs int) error {
	bad := func(format string, a ...any) error {
		return &fence.InvalidError{Field: "set clause", Reason: fmt.Sprintf(format, a...)}
	}
	if !utf8.ValidString(set) {
		return bad("not valid UTF-8")
	}
	depth, marks := 0, 0
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
		case c == '`' && d == MySQL:
			end := closingQuote(set, i)
			if end < 0 {
				return bad("unterminated backquote at byte %d", i)
			}
			i = end + 1
			continue
		case c == '`':
			return bad("backquote at byte %d; quote identifiers with double quotes", i)
		case c == '#' && d == MySQL:
			return bad("# (a comment in MySQL) at byte %d", i)
		case c == '?' && d == MySQL:
			marks++
			if marks > nargs {
				return bad("more than %d ? placeholders", nargs)
			}
		case c == '$' && d == MySQL:
			return bad("$ at byte %d; MySQL's placeholders are ?", i)
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
	if d == MySQL && marks != nargs {
		return bad("%d ? placeholders for %d arguments", marks, nargs)
	}
	return nil
}

// checkAssignments checks that set, which checkSet has accepted, is a
// comma-separated list of assignments "target = expression" that leaves
// the column called fenceColumn to the fence. A target is a column name
// (bare or double-quoted, optionally followed by PostgreSQL's .field or
// [subscript]) or a parenthesised list of column names; the fence column
// is recognised without regard to ASCII case, as SQLite and unquoted
// PostgreSQL names are. Whether each expression is valid SQL is left to
// the database. It returns a *fence.InvalidError.
//
// In MySQL (d), a target may also be backquoted and qualified
// (t.fence, db.t.fence: the last name is the column), and MySQL compares
// column names without regard to case.
func checkAssignments(d Dialect, set, fenceColumn string) error {
	bad := func(format string, a ...any) error {
		return &fence.InvalidError{Field: "set clause", Reason: fmt.Sprintf(format, a...)}
	}
	if strings.TrimSpace(set) == "" {
		return nil
	}
	parts, err := splitTopLevel(set)
	if err != nil {
		return bad("%v", err)
	}
	for _, p := range parts {
		item := strings.TrimSpace(p.text)
		if item == "" {
			return bad("empty assignment at byte %d", p.at)
		}
		names, rest, ok := parseTarget(d, item)
		rest = strings.TrimLeft(rest, space)
		if !ok || !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "==") {
			return bad("%q at byte %d is not an assignment: want column = expression", item, p.at)
		}
		if strings.TrimSpace(rest[1:]) == "" {
			return bad("%q at byte %d assigns nothing", item, p.at)
		}
		for _, n := range names {
			if asciiEqualFold(n, fenceColumn) {
				return bad("%q at byte %d assigns the fence column %q, which the fence sets", item, p.at, fenceColumn)
			}
		}
	}
	return nil
}

// space is the white space skipped between the tokens of a target.
const space = " \t\r\n"

// part is one comma-separated piece of a SET clause and its offset.
type part struct {
	text string
	at   int
}

// splitTopLevel splits set at the commas outside quotes, parentheses and
// brackets.
func splitTopLevel(set string) ([]part, error) {
	var parts []part
	var stack []byte // the closing brackets expected
	start := 0
	for i := 0; i < len(set); i++ {
		switch c := set[i]; c {
		case '\'', '"', '`':
			end := closingQuote(set, i)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c quote at byte %d", c, i)
			}
			i = end
		case '(':
			stack = append(stack, ')')
		case '[':
			stack = append(stack, ']')
		case ')', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return nil, fmt.Errorf("unbalanced %c at byte %d", c, i)
			}
			stack = stack[:len(stack)-1]
		case ',':
			if len(stack) == 0 {
				parts = append(parts, part{set[start:i], start})
				start = i + 1
			}
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("unbalanced %c", stack[len(stack)-1])
	}
	return append(parts, part{set[start:], start}), nil
}

// parseTarget reads the target at the start of an assignment: a column
// name with optional .field and [subscript] suffixes, or a parenthesised
// list of column names. It returns the column names and what follows.
func parseTarget(d Dialect, s string) (names []string, rest string, ok bool) {
	if strings.HasPrefix(s, "(") {
		s = s[1:]
		for {
			name, r, ok := parseName(strings.TrimLeft(s, space))
			if !ok {
				return nil, "", false
			}
			names = append(names, name)
			r = strings.TrimLeft(r, space)
			switch {
			case strings.HasPrefix(r, ","):
				s = r[1:]
			case strings.HasPrefix(r, ")"):
				return names, r[1:], true
			default:
				return nil, "", false
			}
		}
	}
	name, s, ok := parseName(s)
	if !ok {
		return nil, "", false
	}
	for {
		t := strings.TrimLeft(s, space)
		switch {
		case strings.HasPrefix(t, "."):
			if part, r, ok := parseName(strings.TrimLeft(t[1:], space)); ok {
				if d == MySQL {
					name = part // a qualified column: the last part names it
				}
				s = r
				continue
			}
			return nil, "", false
		case strings.HasPrefix(t, "["):
			end := strings.IndexByte(t, ']') // splitTopLevel balanced them
			if end < 0 {
				return nil, "", false
			}
			s = t[end+1:]
			continue
		}
		return []string{name}, s, true
	}
}

// parseName reads a bare, double-quoted or backquoted identifier at the
// start of s.
func parseName(s string) (name, rest string, ok bool) {
	switch {
	case s == "":
		return "", "", false
	case s[0] == '"' || s[0] == '`':
		q := s[:1]
		end := closingQuote(s, 0)
		if end < 0 {
			return "", "", false
		}
		return strings.ReplaceAll(s[1:end], q+q, q), s[end+1:], true
	case isIdentStart(s[0]):
		j := 1
		for j < len(s) && (isIdentStart(s[j]) || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return s[:j], s[j:], true
	}
	return "", "", false
}

// asciiEqualFold reports whether a and b are equal when ASCII letters are
// compared without regard to case.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
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
