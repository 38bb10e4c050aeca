package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// DeleteItem deletes the item under in.Key if token is at least its
// fence: in one conditional PutItem, it replaces the item with a tombstone
// holding the key, the fence attribute set to token, the tombstone marker
// and the write id, so the high-water mark outlives the item. Deleting an
// absent item is not an error and still leaves a tombstone. The caller's
// ConditionExpression (combined by AND), names and values are kept; in is
// not modified.
//
// Errors are as for PutItem. The output is the SDK's DeleteItemOutput,
// with Attributes (ReturnValues ALL_OLD) nil when there was no live item.
func (t *Table) DeleteItem(ctx context.Context, token fence.Token, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if in == nil {
		return nil, &fence.InvalidError{Field: "input", Reason: "nil"}
	}
	if err := checkLegacy(in.Expected, in.ConditionalOperator); err != nil {
		return nil, err
	}
	key, err := t.key("Key", in.Key, true)
	if err != nil {
		return nil, err
	}
	w, err := t.begin("delete", token, in.TableName, key)
	if err != nil {
		return nil, err
	}
	e, err := t.fenced(w, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	item := make(map[string]types.AttributeValue, len(key)+3)
	for k, v := range key {
		item[k] = v
	}
	item[t.o.FenceAttribute] = tokenValue(token)
	item[t.o.WriteIDAttribute] = &types.AttributeValueMemberS{Value: w.id}
	item[t.o.TombstoneAttribute] = &types.AttributeValueMemberBOOL{Value: true}
	out, err := t.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(t.o.Table),
		Item:                                item,
		ConditionExpression:                 aws.String(e.condition),
		ExpressionAttributeNames:            e.names,
		ExpressionAttributeValues:           e.values,
		ReturnValues:                        in.ReturnValues,
		ReturnConsumedCapacity:              in.ReturnConsumedCapacity,
		ReturnItemCollectionMetrics:         in.ReturnItemCollectionMetrics,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, w.watch(optFns)...)
	if err != nil {
		if applied, err := t.settle(ctx, w, err); !applied {
			return nil, err
		}
		return &dynamodb.DeleteItemOutput{}, nil
	}
	return &dynamodb.DeleteItemOutput{
		Attributes:            t.visible(out.Attributes),
		ConsumedCapacity:      out.ConsumedCapacity,
		ItemCollectionMetrics: out.ItemCollectionMetrics,
		ResultMetadata:        out.ResultMetadata,
	}, nil
}
