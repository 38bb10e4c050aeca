package dynamo

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// Renew implements driver.Locker: one conditional UpdateItem that
// writes a new version, lease duration and expiry if the item still has
// the lease's owner and token and is held. Observers then restart their
// wait.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	version := newVersion()
	sent := d.clock.Now()
	err := d.updateHeld(ctx, lease, "SET #v = :v, #l = :l, #e = :e", []string{"#l", "#e"}, map[string]types.AttributeValue{
		":v": &types.AttributeValueMemberS{Value: version},
		":l": millis(lease.TTL),
		":e": expiry(sent, lease.TTL),
	})
	if err != nil {
		return d.settleHeld(ctx, lease.Key, version, err)
	}
	return nil
}

// Release implements driver.Locker: one conditional UpdateItem that
// marks the item free and writes a new version if the item still has the
// lease's owner and token and is held. The item and its token stay.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	version := newVersion()
	err := d.updateHeld(ctx, lease, "SET #v = :v, #h = :false", nil, map[string]types.AttributeValue{
		":v":     &types.AttributeValueMemberS{Value: version},
		":false": &types.AttributeValueMemberBOOL{Value: false},
	})
	if err != nil {
		return d.settleHeld(ctx, lease.Key, version, err)
	}
	return nil
}

// Break implements driver.Locker: one UpdateItem that marks key's
// item free and writes a new version, whoever holds it, if the item
// exists. The token stays, so the next Acquire issues a higher one.
func (d *store) Break(ctx context.Context, key string) error {
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      d.itemKey(key),
		UpdateExpression:         aws.String("SET #v = :v, #h = :false"),
		ConditionExpression:      aws.String("attribute_exists(#k)"),
		ExpressionAttributeNames: d.names("#k", "#v", "#h"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":v":     &types.AttributeValueMemberS{Value: newVersion()},
			":false": &types.AttributeValueMemberBOOL{Value: false},
		},
	})
	if _, unknown := errors.AsType[*types.ConditionalCheckFailedException](err); err != nil && !unknown {
		return sdkError("UpdateItem", err)
	}
	return nil
}

// updateHeld applies update to lease's item on the condition that the
// item has the lease's owner and token and is held. extra lists the
// placeholders the update uses besides #v.
func (d *store) updateHeld(ctx context.Context, lease fence.Lease, update string, extra []string, values map[string]types.AttributeValue) error {
	values[":o"] = &types.AttributeValueMemberS{Value: lease.Owner}
	values[":t"] = &types.AttributeValueMemberN{Value: lease.Token.String()}
	values[":true"] = &types.AttributeValueMemberBOOL{Value: true}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(d.table),
		Key:                                 d.itemKey(lease.Key),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("#o = :o AND #t = :t AND #h = :true"),
		ExpressionAttributeNames:            d.names(append([]string{"#o", "#t", "#h", "#v"}, extra...)...),
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// settleHeld finds out what became of a failed Renew or Release that
// carried version: nil if it was applied after all, a *fence.NotHeldError
// if the condition failed, the write's error otherwise.
func (d *store) settleHeld(ctx context.Context, key, version string, err error) error {
	o, err := d.settle(ctx, key, version, err)
	switch {
	case err != nil:
		return err
	case o.applied:
		return nil
	case o.condFailed:
		return &fence.NotHeldError{Key: key, Reason: "released, broken or taken over"}
	}
	return o.err
}
