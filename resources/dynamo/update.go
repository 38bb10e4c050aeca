package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// UpdateItem applies in.UpdateExpression to the item under in.Key if token
// is at least the item's fence, and sets the fence attribute to token in
// the same conditional write: the assignment is appended to the
// expression's SET clause, or a SET clause is added, whatever the order of
// its SET, REMOVE, ADD and DELETE clauses. An update of an absent item or
// a tombstone creates the item, as DynamoDB's UpdateItem does. The
// caller's ConditionExpression (combined by AND), names and values are
// kept; in is not modified. in.UpdateExpression may be empty: the update
// then only raises the fence. It may not touch the fence, tombstone or
// write id attributes (DynamoDB refuses overlapping paths).
//
// Errors and output are as for PutItem; Attributes are nil when the
// returned old values are those of a tombstone.
func (t *Table) UpdateItem(ctx context.Context, token fence.Token, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if in == nil {
		return nil, &fence.InvalidError{Field: "input", Reason: "nil"}
	}
	if err := checkLegacy(in.Expected, in.ConditionalOperator); err != nil {
		return nil, err
	}
	if len(in.AttributeUpdates) > 0 {
		return nil, &fence.InvalidError{Field: "AttributeUpdates", Reason: "legacy updates cannot be combined with the fence; use UpdateExpression"}
	}
	key, err := t.key("Key", in.Key, true)
	if err != nil {
		return nil, err
	}
	w, err := t.begin("update", token, in.TableName, key)
	if err != nil {
		return nil, err
	}
	e, err := t.fenced(w, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	update, err := addToUpdate(aws.ToString(in.UpdateExpression),
		nameFence+" = "+valueToken+", "+nameWriteID+" = "+valueWriteID, nameTombstone)
	if err != nil {
		return nil, err
	}
	e.names[nameWriteID] = t.o.WriteIDAttribute
	e.names[nameTombstone] = t.o.TombstoneAttribute
	e.values[valueWriteID] = &types.AttributeValueMemberS{Value: w.id}
	req := *in
	req.TableName = aws.String(t.o.Table)
	req.UpdateExpression = aws.String(update)
	req.ConditionExpression = aws.String(e.condition)
	req.ExpressionAttributeNames = e.names
	req.ExpressionAttributeValues = e.values
	req.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := t.api.UpdateItem(ctx, &req, w.watch(optFns)...)
	if err != nil {
		if applied, err := t.settle(ctx, w, err); !applied {
			return nil, err
		}
		return &dynamodb.UpdateItemOutput{}, nil
	}
	out.Attributes = t.visible(out.Attributes)
	return out, nil
}
