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
func UpdateItem(ctx context.Context, r *fence.Resource, token fence.Token, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	s, err := storeOf(r, "update item")
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, s.opErr("update item", nil, &fence.InvalidError{Field: "input", Reason: "nil"})
	}
	out, err := s.updateItem(ctx, token, in, optFns)
	if err != nil {
		return nil, s.opErr("update item", in.Key, err)
	}
	return out, nil
}

func (r *store) updateItem(ctx context.Context, token fence.Token, in *dynamodb.UpdateItemInput, optFns []func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if err := r.checkWrite(token, in.TableName, in.Expected, in.ConditionalOperator, in.ExpressionAttributeNames, in.ExpressionAttributeValues); err != nil {
		return nil, err
	}
	if len(in.AttributeUpdates) > 0 {
		return nil, &fence.InvalidError{Field: "AttributeUpdates", Reason: "legacy updates cannot be combined with the fence; use UpdateExpression"}
	}
	key, err := r.key("Key", in.Key, true)
	if err != nil {
		return nil, err
	}
	update, err := addToUpdate(aws.ToString(in.UpdateExpression),
		nameFence+" = "+valueToken+", "+nameWriteID+" = "+valueWriteID, nameTombstone)
	if err != nil {
		return nil, err
	}
	w := r.newWrite("update", token, key)
	e := r.fenced(w, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	e.names[nameWriteID] = r.o.WriteIDAttribute
	e.names[nameTombstone] = r.o.TombstoneAttribute
	e.values[valueWriteID] = &types.AttributeValueMemberS{Value: w.id}
	req := *in
	req.TableName = aws.String(r.table)
	req.UpdateExpression = aws.String(update)
	req.ConditionExpression = aws.String(e.condition)
	req.ExpressionAttributeNames = e.names
	req.ExpressionAttributeValues = e.values
	req.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := r.api.UpdateItem(ctx, &req, w.watch(optFns)...)
	if err != nil {
		if applied, err := r.settle(ctx, w, err); !applied {
			return nil, err
		}
		return &dynamodb.UpdateItemOutput{}, nil
	}
	out.Attributes = r.visible(out.Attributes)
	return out, nil
}
