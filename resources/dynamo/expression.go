package dynamo

import (
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// The package's own expression placeholders. Callers' placeholders may not
// start with reservedNamePrefix or reservedValuePrefix.
const (
	// reservedNamePrefix starts every expression attribute name the
	// package adds; callers' names starting with it are refused.
	reservedNamePrefix = "#fencekit"
	// reservedValuePrefix starts every expression attribute value the
	// package adds; callers' values starting with it are refused.
	reservedValuePrefix = ":fencekit"

	nameFence     = reservedNamePrefix + "_f"
	nameTombstone = reservedNamePrefix + "_d"
	nameWriteID   = reservedNamePrefix + "_w"
	valueToken    = reservedValuePrefix + "_t"
	valueOne      = reservedValuePrefix + "_one"
	valueWriteID  = reservedValuePrefix + "_w"
)

// fenceCondition is true when the item has no fence attribute or one
// between 1 and the token: "fence <= token" that also fails on a fence
// attribute of another type, or set by hand to 0 or below.
const fenceCondition = "(attribute_not_exists(" + nameFence + ") OR " + nameFence + " BETWEEN " + valueOne + " AND " + valueToken + ")"

// expr is the merged expression parts of one fenced write.
type expr struct {
	condition string
	names     map[string]string
	values    map[string]types.AttributeValue
}

// fenced merges the fence condition and placeholders of w with the
// caller's condition, names and values, which checkNames and checkValues
// passed. The caller's maps are not modified.
func (r *store) fenced(w *write, cond *string, names map[string]string, values map[string]types.AttributeValue) expr {
	e := expr{condition: fenceCondition}
	if cond != nil && strings.TrimSpace(*cond) != "" {
		e.condition += " AND (" + *cond + ")"
	}
	e.names = maps.Clone(names)
	if e.names == nil {
		e.names = make(map[string]string, 3)
	}
	e.names[nameFence] = r.o.FenceAttribute
	e.values = maps.Clone(values)
	if e.values == nil {
		e.values = make(map[string]types.AttributeValue, 3)
	}
	e.values[valueToken] = tokenValue(w.token)
	e.values[valueOne] = tokenValue(1)
	return e
}

// checkNames refuses expression attribute names with the reserved prefix.
func checkNames(names map[string]string) error {
	for k := range names {
		if hasPrefixFold(k, reservedNamePrefix) {
			return &fence.InvalidError{Field: "ExpressionAttributeNames", Reason: fmt.Sprintf("%q starts with %q, which is reserved for the fence", k, reservedNamePrefix)}
		}
	}
	return nil
}

// checkValues refuses expression attribute values with the reserved
// prefix.
func checkValues(values map[string]types.AttributeValue) error {
	for k := range values {
		if hasPrefixFold(k, reservedValuePrefix) {
			return &fence.InvalidError{Field: "ExpressionAttributeValues", Reason: fmt.Sprintf("%q starts with %q, which is reserved for the fence", k, reservedValuePrefix)}
		}
	}
	return nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
