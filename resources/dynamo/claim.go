package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// maxClaimTries bounds the rounds of a Claim that keeps finding the item
// changed between its read and its update (or keeps losing answers).
const maxClaimTries = 8

// Claim implements driver.Resource with a conditional UpdateItem that
// sets the fence attribute of an existing item (a value or a tombstone) to
// token, on the fence condition, and leaves every other attribute: the
// value, or the tombstone marker, stays. A key without an item gets a
// tombstone carrying token, as Delete leaves, conditioned on there still
// being no item. A condition that fails, or an answer that is lost, is
// settled by reading the item: a fence at token is this claim (or the
// token's own holder's write), a higher one refuses it as stale, or, when
// an earlier attempt may have landed, leaves the outcome unknown.
func (r *store) Claim(ctx context.Context, key string, token fence.Token) error {
	k, err := r.item(key)
	if err != nil {
		return err
	}
	var lastErr error
	maybe := false
	for range maxClaimTries {
		item, err := r.read(ctx, k)
		if err != nil {
			return r.claimUnknown(ctx, maybe, token, k, errors.Join(lastErr, err))
		}
		highest, err := parseFence(r.describeKey(k), r.o.FenceAttribute, item[r.o.FenceAttribute])
		if err != nil {
			return err
		}
		switch {
		case item != nil && highest == 0:
			return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("item has no fence attribute %q", r.o.FenceAttribute)}
		case highest == token:
			// Claimed already, by a lost attempt of this claim or by the
			// token's holder: nothing to write.
			return nil
		case highest > token && maybe:
			return &fence.UnknownOutcomeError{Key: key, Token: token, Highest: highest, Err: lastErr}
		case highest > token:
			return &fence.StaleTokenError{Key: key, Token: token, Highest: highest}
		case item == nil:
			w := r.newWrite("delete", token, k)
			_, err = r.sendDelete(ctx, w, &dynamodb.DeleteItemInput{
				ConditionExpression: aws.String("attribute_not_exists(" + nameFence + ")"),
			}, nil)
			if _, ok := errors.AsType[*ConditionFailedError](err); ok {
				lastErr = err
				continue // an item appeared: claim it instead
			}
			return err
		}
		w := r.newWrite("claim", token, k)
		e := r.fenced(w, aws.String("attribute_exists("+nameFence+")"), nil, nil)
		e.names[nameWriteID] = r.o.WriteIDAttribute
		e.values[valueWriteID] = &types.AttributeValueMemberS{Value: w.id}
		_, err = r.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(r.table),
			Key:                       k,
			UpdateExpression:          aws.String("SET " + nameFence + " = " + valueToken + ", " + nameWriteID + " = " + valueWriteID),
			ConditionExpression:       aws.String(e.condition),
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
		}, w.watch(nil)...)
		if err == nil {
			return nil
		}
		if w.maybe.Load() {
			maybe = true
		}
		lastErr = err
		if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
			continue // read what changed
		}
		if !ambiguous(err) {
			return storeErr(err)
		}
		maybe = true
		if ctx.Err() != nil {
			return r.claimUnknown(ctx, maybe, token, k, err)
		}
	}
	return r.claimUnknown(ctx, maybe, token, k, lastErr)
}

// claimUnknown is the error of a claim that could not be settled: unknown
// when an attempt may have been applied, err otherwise.
func (r *store) claimUnknown(ctx context.Context, maybe bool, token fence.Token, k map[string]types.AttributeValue, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = errors.Join(err, cerr)
	}
	if !maybe {
		return storeErr(err)
	}
	return &fence.UnknownOutcomeError{Key: r.describeKey(k), Token: token, Err: err}
}
