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
// *fence.CorruptError; the item is then unchanged. The output is the SDK's,
// with Attributes (ReturnValues ALL_OLD) nil when the old item was a
// tombstone, and without the write id attribute. After a write that was
// found applied by reading it back (see the package doc), the output is
// empty.
func (t *Table) PutItem(ctx context.Context, token fence.Token, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if in == nil {
		return nil, &fence.InvalidError{Field: "input", Reason: "nil"}
	}
	if err := checkLegacy(in.Expected, in.ConditionalOperator); err != nil {
		return nil, err
	}
	key, err := t.key("Item", in.Item, false)
	if err != nil {
		return nil, err
	}
	for _, a := range []string{t.o.FenceAttribute, t.o.TombstoneAttribute, t.o.WriteIDAttribute} {
		if _, ok := in.Item[a]; ok {
			return nil, &fence.InvalidError{Field: "Item", Reason: fmt.Sprintf("attribute %q is written by the fence", a)}
		}
	}
	w, err := t.begin("put", token, in.TableName, key)
	if err != nil {
		return nil, err
	}
	e, err := t.fenced(w, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	item := maps.Clone(in.Item)
	item[t.o.FenceAttribute] = tokenValue(token)
	item[t.o.WriteIDAttribute] = &types.AttributeValueMemberS{Value: w.id}
	req := *in
	req.TableName = aws.String(t.o.Table)
	req.Item = item
	req.ConditionExpression = aws.String(e.condition)
	req.ExpressionAttributeNames = e.names
	req.ExpressionAttributeValues = e.values
	req.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := t.api.PutItem(ctx, &req, w.watch(optFns)...)
	if err != nil {
		if applied, err := t.settle(ctx, w, err); !applied {
			return nil, err
		}
		return &dynamodb.PutItemOutput{}, nil
	}
	out.Attributes = t.visible(out.Attributes)
	return out, nil
}
