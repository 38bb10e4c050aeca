package dynamo

import (
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// PutItem writes in.Item if token is at least the item's fence, and sets
// the fence attribute to token in the same conditional write. in is the
// SDK's input: its ConditionExpression (combined with the fence condition
// by AND), ExpressionAttributeNames and ExpressionAttributeValues are kept,
// TableName may be nil, and in itself is not modified. The item may not
// set the fence, tombstone or write id attributes.
//
// A stale token gets a *fence.StaleTokenError, the caller's condition
// failing a *ConditionFailedError, a corrupted fence attribute a
// *fence.CorruptError; the item is then unchanged. A resource r that is
// not one of New's gets a *fence.InvalidError. Every error is a
// *fence.OpError naming the item. The output is the SDK's, with
// Attributes (ReturnValues ALL_OLD) nil when the old item was a tombstone,
// and without the write id attribute. After a write that was found
// applied by reading it back (see the package doc), the output is empty.
func PutItem(ctx context.Context, r *fence.Resource, token fence.Token, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	s, err := storeOf(r, "put item")
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, s.opErr("put item", nil, &fence.InvalidError{Field: "input", Reason: "nil"})
	}
	out, err := s.putItem(ctx, token, in, optFns)
	if err != nil {
		return nil, s.opErr("put item", in.Item, err)
	}
	return out, nil
}

func (r *store) putItem(ctx context.Context, token fence.Token, in *dynamodb.PutItemInput, optFns []func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := r.checkWrite(token, in.TableName, in.Expected, in.ConditionalOperator, in.ExpressionAttributeNames, in.ExpressionAttributeValues); err != nil {
		return nil, err
	}
	key, err := r.key("Item", in.Item, false)
	if err != nil {
		return nil, err
	}
	for _, a := range []string{r.o.FenceAttribute, r.o.TombstoneAttribute, r.o.WriteIDAttribute} {
		if _, ok := in.Item[a]; ok {
			return nil, &fence.InvalidError{Field: "Item", Reason: fmt.Sprintf("attribute %q is written by the fence", a)}
		}
	}
	return r.sendPut(ctx, r.newWrite("put", token, key), in, optFns)
}

// sendPut sends the fenced PutItem of w for a checked in.
func (r *store) sendPut(ctx context.Context, w *write, in *dynamodb.PutItemInput, optFns []func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	e := r.fenced(w, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	item := maps.Clone(in.Item)
	item[r.o.FenceAttribute] = tokenValue(w.token)
	item[r.o.WriteIDAttribute] = &types.AttributeValueMemberS{Value: w.id}
	req := *in
	req.TableName = aws.String(r.table)
	req.Item = item
	req.ConditionExpression = aws.String(e.condition)
	req.ExpressionAttributeNames = e.names
	req.ExpressionAttributeValues = e.values
	req.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := r.api.PutItem(ctx, &req, w.watch(optFns)...)
	if err != nil {
		if applied, err := r.settle(ctx, w, err); !applied {
			return nil, err
		}
		return &dynamodb.PutItemOutput{}, nil
	}
	out.Attributes = r.visible(out.Attributes)
	return out, nil
}
