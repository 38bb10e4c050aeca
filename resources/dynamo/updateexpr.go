package dynamo

import (
	"fmt"
	"strings"

	"github.com/fencekit/fence"
)

// updateClause is one clause of an UpdateExpression: SET, REMOVE, ADD or
// DELETE and its actions.
type updateClause struct {
	keyword string // upper case
	body    string // trimmed, never empty
}

// parseUpdate splits an UpdateExpression into its clauses, in their
// order. The clauses may come in any order, each at most once; keywords
// are case-insensitive. A keyword is a whole word that is not part of a
// placeholder (#name, :value) or a nested path (a.b). DynamoDB reserves
// the four keywords, so they cannot be attribute names written as such.
// Text before the first keyword, an empty clause or a repeated keyword is
// refused with a *fence.InvalidError.
func parseUpdate(s string) ([]updateClause, error) {
	var clauses []updateClause
	bodyStart := -1
	seen := map[string]bool{}
	closeClause := func(end int) error {
		if len(clauses) == 0 {
			if strings.TrimSpace(s[:end]) != "" {
				return invalidUpdate(fmt.Sprintf("%q comes before the first SET, REMOVE, ADD or DELETE", strings.TrimSpace(s[:end])))
			}
			return nil
		}
		c := &clauses[len(clauses)-1]
		c.body = strings.TrimSpace(s[bodyStart:end])
		if c.body == "" {
			return invalidUpdate(c.keyword + " clause is empty")
		}
		return nil
	}
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		kw := strings.ToUpper(s[i:j])
		partOfName := i > 0 && (s[i-1] == '#' || s[i-1] == ':' || s[i-1] == '.')
		if !partOfName && (kw == "SET" || kw == "REMOVE" || kw == "ADD" || kw == "DELETE") {
			if err := closeClause(i); err != nil {
				return nil, err
			}
			if seen[kw] {
				return nil, invalidUpdate(kw + " appears twice")
			}
			seen[kw] = true
			clauses = append(clauses, updateClause{keyword: kw})
			bodyStart = j
		}
		i = j
	}
	if err := closeClause(len(s)); err != nil {
		return nil, err
	}
	return clauses, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func invalidUpdate(reason string) error {
	return &fence.InvalidError{Field: "UpdateExpression", Reason: reason}
}

// addToUpdate returns the UpdateExpression s (possibly empty) with the
// actions set appended to its SET clause and remove to its REMOVE clause;
// a clause the expression lacks is added.
func addToUpdate(s, set, remove string) (string, error) {
	clauses, err := parseUpdate(s)
	if err != nil {
		return "", err
	}
	add := map[string]string{"SET": set, "REMOVE": remove}
	for i := range clauses {
		if a, ok := add[clauses[i].keyword]; ok {
			clauses[i].body += ", " + a
			delete(add, clauses[i].keyword)
		}
	}
	for _, kw := range []string{"SET", "REMOVE"} {
		if a, ok := add[kw]; ok {
			clauses = append(clauses, updateClause{keyword: kw, body: a})
		}
	}
	return renderUpdate(clauses), nil
}

// renderUpdate joins clauses into an UpdateExpression.
func renderUpdate(clauses []updateClause) string {
	parts := make([]string, len(clauses))
	for i, c := range clauses {
		parts[i] = c.keyword + " " + c.body
	}
	return strings.Join(parts, " ")
}
