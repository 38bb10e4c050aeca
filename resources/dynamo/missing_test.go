package dynamo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// TestMissingTable: every call on a table that does not exist fails with
// an error matching fence.ErrStoreMissing that still unwraps to the SDK's
// ResourceNotFoundException, in a *fence.OpError naming the operation.
func TestMissingTable(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	r, err := dynamo.New(c, "fence-res-never-created", nil)
	if err != nil {
		t.Fatal(err)
	}
	k := map[string]types.AttributeValue{dynamo.DefaultKeyAttribute: s("k")}
	for _, tc := range []struct {
		op   string
		call func() error
	}{
		{"put", func() error { return r.Put(t.Context(), "k", 1, []byte("v")) }},
		{"get", func() error { _, _, err := r.Get(t.Context(), "k"); return err }},
		{"delete", func() error { return r.Delete(t.Context(), "k", 1) }},
		{"highest", func() error { _, err := r.Highest(t.Context(), "k"); return err }},
		{"put item", func() error { _, err := dynamo.PutItem(t.Context(), r, 1, &dynamodb.PutItemInput{Item: k}); return err }},
		{"update item", func() error {
			_, err := dynamo.UpdateItem(t.Context(), r, 1, &dynamodb.UpdateItemInput{Key: k})
			return err
		}},
		{"delete item", func() error {
			_, err := dynamo.DeleteItem(t.Context(), r, 1, &dynamodb.DeleteItemInput{Key: k})
			return err
		}},
		{"get item", func() error { _, err := dynamo.GetItem(t.Context(), r, &dynamodb.GetItemInput{Key: k}); return err }},
		{"highest item", func() error { _, err := dynamo.HighestItem(t.Context(), r, k); return err }},
	} {
		err := tc.call()
		if !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s = %v; want an error matching fence.ErrStoreMissing", tc.op, err)
		}
		if _, ok := errors.AsType[*types.ResourceNotFoundException](err); !ok {
			t.Errorf("%s = %v; want it to unwrap to the SDK's ResourceNotFoundException", tc.op, err)
		}
		if oe, ok := errors.AsType[*fence.OpError](err); !ok || oe.Backend != "dynamo" || oe.Op != tc.op || oe.Key != "k" {
			t.Errorf("%s = %v; want a *fence.OpError for dynamo, %q, key k", tc.op, err, tc.op)
		}
		if want := `fence/dynamo: ` + tc.op + ` "k": `; err != nil && (!strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "fence/dynamo") != 1) {
			t.Errorf("%s = %q; want one prefix %q", tc.op, err, want)
		}
	}
}

// TestSortKeyTablePortableUnsupported: on a table with a sort key, a
// portable key names no single item, so the portable methods refuse with
// errors.ErrUnsupported and write nothing; the item functions work.
func TestSortKeyTablePortableUnsupported(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	for name, err := range map[string]error{
		"Put":     tb.Put(t.Context(), "x", 1, nil),
		"Delete":  tb.Delete(t.Context(), "x", 1),
		"Get":     func() error { _, _, err := tb.Get(t.Context(), "x"); return err }(),
		"Highest": func() error { _, err := tb.Highest(t.Context(), "x"); return err }(),
	} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s on a table with a sort key = %v; want errors.ErrUnsupported", name, err)
		}
	}
	if _, err := dynamo.PutItem(t.Context(), tb, 1, &dynamodb.PutItemInput{Item: key("x")}); err != nil {
		t.Errorf("PutItem: %v", err)
	}
}
