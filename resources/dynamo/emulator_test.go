package dynamo_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// TestEmulatorGapConditionFailureItem names what dynalite lacks:
// DynamoDB returns the item with a ConditionalCheckFailedException when
// asked with ReturnValuesOnConditionCheckFailure ALL_OLD, and the package
// uses it to tell a stale token without a second request. dynalite
// ignores the parameter, so on it the package always takes its fallback,
// a consistent GetItem (which every stale-token test here exercises).
// DynamoDB Local returns the item, so scripts/test.sh's second run of this
// package, on DynamoDB Local, takes the ALL_OLD path; there the test fails
// without the item. It fails on either if the item returned is not the
// stored one.
func TestEmulatorGapConditionFailureItem(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	if _, err := dynamo.PutItem(t.Context(), tb, 5, &dynamodb.PutItemInput{Item: withKey("gap", map[string]types.AttributeValue{"v": s("stored")})}); err != nil {
		t.Fatal(err)
	}
	_, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{
		TableName:                           aws.String(dynamo.TableOf(tb)),
		Item:                                key("gap"),
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err)
	if !ok {
		t.Fatalf("conditional PutItem = %v; want a ConditionalCheckFailedException", err)
	}
	if len(ccf.Item) == 0 {
		if name, version := emulators.DynamoServer(); name == emulators.DynamoDBLocal {
			t.Fatalf("DynamoDB Local %s returned no item with ConditionalCheckFailedException under ReturnValuesOnConditionCheckFailure ALL_OLD", version)
		}
		t.Log("emulator gap: dynalite returns no item with ConditionalCheckFailedException (ReturnValuesOnConditionCheckFailure ignored); the GetItem fallback is what runs here")
		return
	}
	if attr(ccf.Item, "v") != "stored" || attr(ccf.Item, dynamo.DefaultFenceAttribute) != "5" {
		t.Errorf("ConditionalCheckFailedException.Item = %v; want the stored item", ccf.Item)
	}
}
