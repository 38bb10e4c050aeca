package sql_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	fencesql "github.com/fencekit/fence/resources/sql"
)

var (
	quoted      = regexp.MustCompile(`'(?:[^']|'')*'|"(?:[^"]|"")*"`)
	placeholder = regexp.MustCompile(`\$[0-9]*`)
	myQuoted    = regexp.MustCompile("'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`")
)

// FuzzUpdateSQL checks that a SET clause Column.Update accepts cannot reach
// past its assignments: outside quoted text it holds no statement
// separator, comment, stray quote, ? or $ other than $1..$nargs, and the
// statement ends with the fence condition.
func FuzzUpdateSQL(f *testing.F) {
	for _, s := range []string{
		"", "a = $1", "a = a + $1, b = 'x''y'", `"odd "" col" = $2`, "a = 1; drop", "a = 'x' -- c",
		"a = (SELECT 1 WHERE true)", "a = $3", "a = $$x$$", "a = 'unterminated", "a = ?", "x = [1]", "é = $1",
		"a = ?, `b` = ?", "a = 1 # c", "t.fence = ?", "`fe``nce` = 'x?'",
	} {
		f.Add(s, 2)
	}
	c := offlineColumn(f, fencesql.PostgreSQL, "t", "id", "fence")
	my := offlineColumn(f, fencesql.MySQL, "t", "id", "fence")
	f.Fuzz(func(t *testing.T, set string, nargs int) {
		nargs = nargs & 0xff
		if stmt, err := fencesql.UpdateSQL(my, set, nargs); err == nil {
			// MySQL: ? placeholders, exactly nargs of them outside quoted
			// text and backquoted names, and nothing that ends the
			// statement or starts a comment there.
			if !strings.HasSuffix(stmt, "\nWHERE `id` = ? AND `fence` >= 0 AND `fence` <= ?") {
				t.Fatalf("MySQL statement %q does not end with the fence condition", stmt)
			}
			bare := myQuoted.ReplaceAllString(set, " ")
			for _, bad := range []string{";", "--", "/*", "#", "$", `\`, "'", `"`, "`"} {
				if strings.Contains(bare, bad) {
					t.Fatalf("MySQL accepted %q, which holds %q outside quotes", set, bad)
				}
			}
			if n := strings.Count(bare, "?"); n != nargs {
				t.Fatalf("MySQL accepted %q, with %d ? outside quotes for %d arguments", set, n, nargs)
			}
		}
		stmt, err := fencesql.UpdateSQL(c, set, nargs)
		if err != nil {
			return
		}
		wantEnd := "\nWHERE \"id\" = $" + strconv.Itoa(nargs+1) + " AND \"fence\" >= 0 AND \"fence\" <= $" + strconv.Itoa(nargs+2)
		if !strings.HasSuffix(stmt, wantEnd) {
			t.Fatalf("statement %q does not end with the fence condition", stmt)
		}
		bare := quoted.ReplaceAllString(set, " ")
		for _, bad := range []string{";", "--", "/*", "?", `\`, "'", `"`, "`"} {
			if strings.Contains(bare, bad) {
				t.Fatalf("accepted %q, which holds %q outside quotes", set, bad)
			}
		}
		for _, p := range placeholder.FindAllString(bare, -1) {
			n, err := strconv.Atoi(p[1:])
			if err != nil || n < 1 || n > nargs {
				t.Fatalf("accepted %q, which holds %s with %d arguments", set, p, nargs)
			}
		}
	})
}
