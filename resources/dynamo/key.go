package dynamo

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// key returns the key attributes of item, checked: each key attribute of
// the table present, a non-empty string, number or binary, within
// DynamoDB's size limits. With exact set (a Key parameter), item may hold
// nothing else. field names the parameter in errors.
func (r *store) key(field string, item map[string]types.AttributeValue, exact bool) (map[string]types.AttributeValue, error) {
	key := make(map[string]types.AttributeValue, 2)
	check := func(name string, limit int) error {
		av, ok := item[name]
		if !ok || av == nil {
			return &fence.InvalidError{Field: field, Reason: fmt.Sprintf("has no key attribute %q", name)}
		}
		if err := checkKeyValue(field, name, av, limit); err != nil {
			return err
		}
		key[name] = av
		return nil
	}
	if err := check(r.o.KeyAttribute, MaxPartitionKeyLen); err != nil {
		return nil, err
	}
	if r.o.SortKeyAttribute != "" {
		if err := check(r.o.SortKeyAttribute, MaxSortKeyLen); err != nil {
			return nil, err
		}
	}
	if exact && len(item) != len(key) {
		for name := range item {
			if _, ok := key[name]; !ok {
				return nil, &fence.InvalidError{Field: field, Reason: fmt.Sprintf("attribute %q is not a key attribute of the table", name)}
			}
		}
	}
	return key, nil
}

// checkKeyValue checks one key attribute value against DynamoDB's rules.
func checkKeyValue(field, name string, av types.AttributeValue, limit int) error {
	bad := func(reason string) error {
		return &fence.InvalidError{Field: field, Reason: fmt.Sprintf("key attribute %q %s", name, reason)}
	}
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		switch {
		case v.Value == "":
			return bad("is an empty string")
		case len(v.Value) > limit:
			return bad(fmt.Sprintf("is %d bytes, more than the limit of %d", len(v.Value), limit))
		case !utf8.ValidString(v.Value):
			return bad("is not valid UTF-8")
		}
	case *types.AttributeValueMemberB:
		switch {
		case len(v.Value) == 0:
			return bad("is empty")
		case len(v.Value) > limit:
			return bad(fmt.Sprintf("is %d bytes, more than the limit of %d", len(v.Value), limit))
		}
	case *types.AttributeValueMemberN:
		if v.Value == "" {
			return bad("is an empty number")
		}
	default:
		return bad(fmt.Sprintf("is a %s, not a string, number or binary", typeName(av)))
	}
	return nil
}

// describeKey names the item of key in errors: the partition key value
// alone when it is a string and the table has no sort key.
func (r *store) describeKey(key map[string]types.AttributeValue) string {
	pk := key[r.o.KeyAttribute]
	if s, ok := pk.(*types.AttributeValueMemberS); ok && r.o.SortKeyAttribute == "" {
		return s.Value
	}
	var b strings.Builder
	b.WriteString(r.o.KeyAttribute + "=" + showValue(pk))
	if r.o.SortKeyAttribute != "" {
		b.WriteString(", " + r.o.SortKeyAttribute + "=" + showValue(key[r.o.SortKeyAttribute]))
	}
	return b.String()
}

// showValue renders a scalar attribute value for messages.
func showValue(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("%q", v.Value)
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("0x%x", v.Value)
	}
	return typeName(av)
}

// typeName returns DynamoDB's name of the type of av ("S", "N", "B",
// "BOOL", ...).
func typeName(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberM:
		return "M"
	case nil:
		return "absent"
	}
	return fmt.Sprintf("%T", av)
}
