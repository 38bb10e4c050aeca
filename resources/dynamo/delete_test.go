package dynamo_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// TestDeleteItemLeavesTombstone: the deleted item becomes a tombstone with
// only the key, the token, the marker and the write id; readers see it as
// absent; stale writers are refused; a fresh write revives the item.
func TestDeleteItemLeavesTombstone(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	id := "doomed"
	if _, err := dynamo.PutItem(t.Context(), tb, 2, &dynamodb.PutItemInput{Item: withKey(id, map[string]types.AttributeValue{"v": s("data"), "n": n("1")})}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	if _, err := dynamo.DeleteItem(t.Context(), tb, 3, &dynamodb.DeleteItemInput{Key: key(id)}); err != nil {
		t.Fatalf("DeleteItem: %v", err)
	}
	stored := raw(t, c, tb, key(id))
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range stored {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{dynamo.DefaultTombstoneAttribute, dynamo.DefaultFenceAttribute, dynamo.DefaultWriteIDAttribute, "pk", "sk"}
	slices.Sort(want)
	if !slices.Equal(names, want) || attr(stored, dynamo.DefaultFenceAttribute) != "3" {
		t.Fatalf("tombstone = %v; want attributes %v and fence 3", stored, want)
	}

	for _, get := range []*dynamodb.GetItemInput{
		{Key: key(id), ConsistentRead: aws.Bool(true)},
		{Key: key(id), ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("v, #n"), ExpressionAttributeNames: map[string]string{"#n": "n"}},
		{Key: key(id), ConsistentRead: aws.Bool(true), AttributesToGet: []string{"v"}},
	} {
		out, err := dynamo.GetItem(t.Context(), tb, get)
		if err != nil || out.Item != nil {
			t.Errorf("GetItem(%v) of a tombstone = %v, %v; want no item", aws.ToString(get.ProjectionExpression), out, err)
		}
	}
	if h, err := dynamo.HighestItem(t.Context(), tb, key(id)); err != nil || h != 3 {
		t.Errorf("Highest after DeleteItem = %d, %v; want 3", h, err)
	}

	// Stale writers of every kind are refused.
	_, err := dynamo.PutItem(t.Context(), tb, 2, &dynamodb.PutItemInput{Item: withKey(id, nil)})
	wantKind(t, "PutItem(2) after DeleteItem(3)", err, "stale", 3)
	_, err = dynamo.UpdateItem(t.Context(), tb, 2, &dynamodb.UpdateItemInput{Key: key(id)})
	wantKind(t, "UpdateItem(2) after DeleteItem(3)", err, "stale", 3)
	_, err = dynamo.DeleteItem(t.Context(), tb, 1, &dynamodb.DeleteItemInput{Key: key(id)})
	wantKind(t, "DeleteItem(1) after DeleteItem(3)", err, "stale", 3)

	// An update with the current token revives the item: the marker goes.
	if _, err := dynamo.UpdateItem(t.Context(), tb, 3, &dynamodb.UpdateItemInput{
		Key: key(id), UpdateExpression: aws.String("SET v = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("again")},
	}); err != nil {
		t.Fatalf("UpdateItem(3) after DeleteItem(3): %v", err)
	}
	out, err := dynamo.GetItem(t.Context(), tb, &dynamodb.GetItemInput{Key: key(id), ConsistentRead: aws.Bool(true)})
	if err != nil || attr(out.Item, "v") != "again" || attr(out.Item, "n") != "<absent>" {
		t.Fatalf("GetItem after the revival = %v, %v; want v=again and no n", out, err)
	}
	if _, ok := out.Item[dynamo.DefaultWriteIDAttribute]; ok {
		t.Errorf("GetItem returned the write id: %v", out.Item)
	}
	if _, ok := raw(t, c, tb, key(id))[dynamo.DefaultTombstoneAttribute]; ok {
		t.Errorf("the revived item still carries the tombstone marker")
	}
}

// TestDeleteItemOfAbsentItem records the token all the same.
func TestDeleteItemOfAbsentItem(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	out, err := dynamo.DeleteItem(t.Context(), tb, 8, &dynamodb.DeleteItemInput{Key: key("never"), ReturnValues: types.ReturnValueAllOld})
	if err != nil || out.Attributes != nil {
		t.Fatalf("DeleteItem of an absent item = %v, %v; want success and no old attributes", out, err)
	}
	if h, err := dynamo.HighestItem(t.Context(), tb, key("never")); err != nil || h != 8 {
		t.Errorf("Highest = %d, %v; want 8", h, err)
	}
	_, err = dynamo.PutItem(t.Context(), tb, 7, &dynamodb.PutItemInput{Item: key("never")})
	wantKind(t, "PutItem(7)", err, "stale", 8)
}

// TestDeleteItemCondition: the caller's condition guards the delete, and
// its failure is told from a stale token.
func TestDeleteItemCondition(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	if _, err := dynamo.PutItem(t.Context(), tb, 5, &dynamodb.PutItemInput{Item: withKey("c", map[string]types.AttributeValue{"v": s("keep")})}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	del := func(tok fence.Token, want string) error {
		_, err := dynamo.DeleteItem(t.Context(), tb, tok, &dynamodb.DeleteItemInput{
			Key: key("c"), ConditionExpression: aws.String("v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s(want)},
		})
		return err
	}
	wantKind(t, "DeleteItem(6) on v = other", del(6, "other"), "cond", 0)
	wantKind(t, "DeleteItem(4) on v = keep", del(4, "keep"), "stale", 5)
	if got := attr(raw(t, c, tb, key("c")), "v"); got != "keep" {
		t.Fatalf("refused deletes changed the item: v = %s", got)
	}
	wantKind(t, "DeleteItem(6) on v = keep", del(6, "keep"), "ok", 0)
	// The ConditionFailedError carries the item as it was.
	err := del(6, "keep") // the tombstone has no v
	var ce *dynamo.ConditionFailedError
	if !errors.As(err, &ce) || attr(ce.Item, dynamo.DefaultFenceAttribute) != "6" {
		t.Fatalf("DeleteItem of the tombstone with a condition on v = %v; want a ConditionFailedError with the tombstone", err)
	}
}
