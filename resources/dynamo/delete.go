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
func DeleteItem(ctx context.Context, r *fence.Resource, token fence.Token, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	s, err := storeOf(r, "delete item")
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, s.opErr("delete item", nil, &fence.InvalidError{Field: "input", Reason: "nil"})
	}
	out, err := s.deleteItem(ctx, token, in, optFns)
	if err != nil {
		return nil, s.opErr("delete item", in.Key, err)
	}
	return out, nil
}

func (r *store) deleteItem(ctx context.Context, token fence.Token, in *dynamodb.DeleteItemInput, optFns []func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := r.checkWrite(token, in.TableName, in.Expected, in.ConditionalOperator, in.ExpressionAttributeNames, in.ExpressionAttributeValues); err != nil {
		return nil, err
	}
	key, err := r.key("Key", in.Key, true)
	if err != nil {
		return nil, err
	}
	return r.sendDelete(ctx, r.newWrite("delete", token, key), in, optFns)
}

// sendDelete sends the tombstone PutItem of w for a checked in.
func (r *store) sendDelete(ctx context.Context, w *write, in *dynamodb.DeleteItemInput, optFns []func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	e := r.fenced(w, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	item := make(map[string]types.AttributeValue, len(w.key)+3)
	for k, v := range w.key {
		item[k] = v
	}
	item[r.o.FenceAttribute] = tokenValue(w.token)
	item[r.o.WriteIDAttribute] = &types.AttributeValueMemberS{Value: w.id}
	item[r.o.TombstoneAttribute] = &types.AttributeValueMemberBOOL{Value: true}
	out, err := r.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(r.table),
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
		if applied, err := r.settle(ctx, w, err); !applied {
			return nil, err
		}
		return &dynamodb.DeleteItemOutput{}, nil
	}
	return &dynamodb.DeleteItemOutput{
		Attributes:            r.visible(out.Attributes),
		ConsumedCapacity:      out.ConsumedCapacity,
		ItemCollectionMetrics: out.ItemCollectionMetrics,
		ResultMetadata:        out.ResultMetadata,
	}, nil
}
