package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// Renew implements fence.Locker: one conditional UpdateItem that writes a
// new version, lease duration and expiry if the item still has the lease's
// owner and token and is held. Observers then restart their wait. Any copy
// of a lease works (see fence.Lease): a lease whose latest renewal by l
// has run out on l's clock is not renewed, and Renew returns an error
// matching fence.ErrNotHeld without writing. The returned lease's
// ValidUntil is the send time plus TTL.
func (l *Locker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	if err := checkLease(lease); err != nil {
		return fence.Lease{}, err
	}
	if err := fence.ValidateTTL(lease.TTL, MinTTL, MaxTTL); err != nil {
		return fence.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return fence.Lease{}, wrap(ctx, "renew", lease.Key, err)
	}
	sent := l.clock.Now()
	if err := l.unexpired(lease, sent); err != nil {
		return fence.Lease{}, err
	}
	version := newVersion()
	err := l.updateHeld(ctx, lease, "SET #v = :v, #l = :l, #e = :e", []string{"#l", "#e"}, map[string]types.AttributeValue{
		":v": &types.AttributeValueMemberS{Value: version},
		":l": millis(lease.TTL),
		":e": expiry(sent, lease.TTL),
	})
	if err != nil {
		if err := l.settleHeld(ctx, "renew", lease.Key, version, err); err != nil {
			if errors.Is(err, fence.ErrNotHeld) {
				l.book.Forget(lease)
			}
			return fence.Lease{}, err
		}
	}
	lease.ValidUntil = sent.Add(lease.TTL)
	l.book.Record(lease, sent)
	return lease, nil
}

// Release implements fence.Locker: one conditional UpdateItem that marks
// the item free and writes a new version if the item still has the lease's
// owner and token and is held. The item and its token stay. Any copy of a
// lease works; a lease whose latest renewal by l has run out on l's clock
// is not released: Release returns an error matching fence.ErrNotHeld
// without writing, and the key stays held in the store until another
// Locker takes it over.
func (l *Locker) Release(ctx context.Context, lease fence.Lease) error {
	if err := checkLease(lease); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return wrap(ctx, "release", lease.Key, err)
	}
	if err := l.unexpired(lease, l.clock.Now()); err != nil {
		return err
	}
	version := newVersion()
	err := l.updateHeld(ctx, lease, "SET #v = :v, #h = :false", nil, map[string]types.AttributeValue{
		":v":     &types.AttributeValueMemberS{Value: version},
		":false": &types.AttributeValueMemberBOOL{Value: false},
	})
	if err != nil {
		err = l.settleHeld(ctx, "release", lease.Key, version, err)
	}
	if err == nil || errors.Is(err, fence.ErrNotHeld) {
		l.book.Forget(lease)
	}
	return err
}

// Break implements fence.Locker: one UpdateItem that marks key's item free
// and writes a new version, whoever holds it, if the item exists. The
// token stays, so the next Acquire issues a higher one.
func (l *Locker) Break(ctx context.Context, key string) error {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return wrap(ctx, "break", key, err)
	}
	_, err := l.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(l.table),
		Key:                      l.itemKey(key),
		UpdateExpression:         aws.String("SET #v = :v, #h = :false"),
		ConditionExpression:      aws.String("attribute_exists(#k)"),
		ExpressionAttributeNames: l.names("#k", "#v", "#h"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":v":     &types.AttributeValueMemberS{Value: newVersion()},
			":false": &types.AttributeValueMemberBOOL{Value: false},
		},
	})
	if _, unknown := errors.AsType[*types.ConditionalCheckFailedException](err); err != nil && !unknown {
		return wrap(ctx, "break", key, err)
	}
	return nil
}

// updateHeld applies update to lease's item on the condition that the
// item has the lease's owner and token and is held. extra lists the
// placeholders the update uses besides #v.
func (l *Locker) updateHeld(ctx context.Context, lease fence.Lease, update string, extra []string, values map[string]types.AttributeValue) error {
	values[":o"] = &types.AttributeValueMemberS{Value: lease.Owner}
	values[":t"] = &types.AttributeValueMemberN{Value: lease.Token.String()}
	values[":true"] = &types.AttributeValueMemberBOOL{Value: true}
	_, err := l.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(l.table),
		Key:                                 l.itemKey(lease.Key),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("#o = :o AND #t = :t AND #h = :true"),
		ExpressionAttributeNames:            l.names(append([]string{"#o", "#t", "#h", "#v"}, extra...)...),
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// settleHeld finds out what became of a failed Renew or Release that
// carried version: nil if it was applied after all, an error matching
// fence.ErrNotHeld if the condition failed, the write's error otherwise.
func (l *Locker) settleHeld(ctx context.Context, op, key, version string, err error) error {
	o, err := l.settle(ctx, op, key, version, err)
	switch {
	case err != nil:
		return err
	case o.applied:
		return nil
	case o.condFailed:
		return fmt.Errorf("fence/dynamo: %s %q: %w", op, key, fence.ErrNotHeld)
	}
	return o.err
}

// unexpired returns an error matching fence.ErrNotHeld if lease has run
// out at now on l's clock: the latest ValidUntil of any copy of it that l
// returned, or of the copy given.
func (l *Locker) unexpired(lease fence.Lease, now time.Time) error {
	until := l.book.ValidUntil(lease)
	if now.Before(until) {
		return nil
	}
	return fmt.Errorf("fence/dynamo: lease on %q (token %d) ran out at %v on this locker's clock: %w",
		lease.Key, lease.Token, until, fence.ErrNotHeld)
}

// checkLease validates a lease handed to Renew or Release.
func checkLease(lease fence.Lease) error {
	if err := fence.ValidateLease(lease, MaxKeyLen); err != nil {
		return err
	}
	return fence.ValidateKey("owner", lease.Owner, MaxOwnerLen)
}
