package dynamo

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// Publish implements driver.Publisher: one conditional UpdateItem that
// sets the item's value and value_token (the lease's token) if the item
// still has the lease's owner and token and is held; a Publish of ""
// removes both. It writes no new version, so it is no renewal: a
// contender watching the item in clock-free mode keeps counting from the
// last renewal, and a holder that died after publishing is taken over
// as soon as it would have been without the Publish. The probes that wake
// waiters (NotifyRelease) read the value and see the change. The update
// sets the same attributes however often it is sent, so the SDK may
// repeat it after a lost answer.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	update := "SET #pv = :pv, #pt = :t"
	values := map[string]types.AttributeValue{
		":o":    &types.AttributeValueMemberS{Value: lease.Owner},
		":t":    &types.AttributeValueMemberN{Value: lease.Token.String()},
		":true": &types.AttributeValueMemberBOOL{Value: true},
	}
	if value == "" {
		update = "REMOVE #pv, #pt"
	} else {
		values[":pv"] = &types.AttributeValueMemberB{Value: []byte(value)}
	}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       d.itemKey(lease.Key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("#o = :o AND #t = :t AND #h = :true"),
		ExpressionAttributeNames:  d.names("#o", "#t", "#h", "#pv", "#pt"),
		ExpressionAttributeValues: values,
	})
	if _, lost := errors.AsType[*types.ConditionalCheckFailedException](err); lost {
		return &fence.NotHeldError{Key: lease.Key, Reason: "released, broken or taken over"}
	}
	if err != nil {
		return sdkError("UpdateItem", err)
	}
	return nil
}
