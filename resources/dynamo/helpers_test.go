package dynamo_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/dynamo"
)

// createTable creates a table of a unique name (prefix "fence-res-", apart
// from the lockers' tables) and deletes it when the test ends.
func createTable(t testing.TB, c *dynamodb.Client, opts *dynamo.TableOptions) string {
	t.Helper()
	table := "fence-res-" + strings.ToLower(rand.Text()[:12])
	if err := dynamo.CreateTable(t.Context(), c, table, opts); err != nil {
		t.Fatalf("CreateTable(%q): %v", table, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
			t.Errorf("delete table %q: %v", table, err)
		}
	})
	return table
}

// itemTable is the table most native tests use: partition key "pk" and
// sort key "sk", both strings.
func itemTable(t testing.TB, c *dynamodb.Client) *fence.Resource {
	t.Helper()
	name := createTable(t, c, &dynamo.TableOptions{KeyAttribute: "pk", SortKeyAttribute: "sk"})
	tb, err := dynamo.New(c, name, &dynamo.Options{KeyAttribute: "pk", SortKeyAttribute: "sk"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tb
}

// s, n and b build attribute values.
func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// key returns the key of item id in an itemTable.
func key(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s(id), "sk": s("v")}
}

// withKey returns key(id) plus attrs.
func withKey(id string, attrs map[string]types.AttributeValue) map[string]types.AttributeValue {
	item := key(id)
	for k, v := range attrs {
		item[k] = v
	}
	return item
}

// raw reads the stored item under k as it is, tombstones and internal
// attributes included.
func raw(t testing.TB, c *dynamodb.Client, tb *fence.Resource, k map[string]types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: aws.String(dynamo.TableOf(tb)), Key: k, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	return out.Item
}

// attr returns item[name] as a string: the value of an S or N, "<absent>"
// or the type otherwise.
func attr(item map[string]types.AttributeValue, name string) string {
	switch v := item[name].(type) {
	case nil:
		return "<absent>"
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			return "true"
		}
		return "false"
	default:
		return "<other>"
	}
}
