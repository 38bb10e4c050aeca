package dynamo

import (
	"context"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Acquire implements driver.Locker: one conditional UpdateItem that
// sets the owner, a new version, the lease duration and expiry, marks the
// item held and increments the token with ADD, if the item is absent, free
// or expired (in clock-free mode: its version is one this Locker has seen
// unchanged for the lease stored with it). A failed Acquire writes
// nothing; it reads the item (from the error where DynamoDB returns it,
// otherwise with one consistent GetItem) and reports the holder in a
// *fence.HeldError, and in clock-free mode starts the wait for a takeover.
//
// If the item changed between the failed update and the read so that it
// looks free or expired, Acquire returns driver.ErrAcquireRaced and the
// portable *fence.Locker tries the update once more.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	version := newVersion()
	sent := d.clock.Now()
	cond, values := d.takeable(key, sent)
	values[":o"] = &types.AttributeValueMemberS{Value: owner}
	values[":v"] = &types.AttributeValueMemberS{Value: version}
	values[":l"] = millis(ttl)
	values[":e"] = expiry(sent, ttl)
	values[":true"] = &types.AttributeValueMemberBOOL{Value: true}
	values[":one"] = &types.AttributeValueMemberN{Value: "1"}
	out, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(d.table),
		Key:                                 d.itemKey(key),
		UpdateExpression:                    aws.String("SET #o = :o, #v = :v, #l = :l, #e = :e, #h = :true ADD #t :one"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            d.names(),
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		r, ok, perr := parseItem(key, out.Attributes)
		switch {
		case perr != nil:
			return fence.Lease{}, perr
		case !ok || r.version != version || r.owner != owner:
			return fence.Lease{}, &fence.CorruptError{Key: key, Reason: "the acquiring update returned an item it did not write"}
		}
		return d.won(key, owner, r.token, ttl, sent), nil
	}
	o, err := d.settle(ctx, key, version, err)
	switch {
	case err != nil:
		return fence.Lease{}, err
	case o.applied: // a lost answer to our own update, which the SDK retried
		return d.won(key, owner, o.rec.token, ttl, sent), nil
	case !o.condFailed:
		return fence.Lease{}, o.err
	case !o.found:
		return fence.Lease{}, driver.ErrAcquireRaced // deleted by hand in between
	case o.rec.token == math.MaxUint64:
		return fence.Lease{}, &fence.CorruptError{Key: key, Reason: "the token is the largest there is; no higher one can be issued"}
	}
	held, until := d.holding(key, o.rec, o.at)
	if !held {
		return fence.Lease{}, driver.ErrAcquireRaced // changed since the update, or expired now
	}
	return fence.Lease{}, &fence.HeldError{Key: key, Owner: o.rec.owner, Token: o.rec.token, ValidUntil: until}
}

// won returns the lease of a successful Acquire, valid until the send time
// of the write that won plus ttl (after a lost answer, that write may be
// an earlier try than the one whose answer came), and forgets what was
// seen of key.
func (d *store) won(key, owner string, token fence.Token, ttl time.Duration, sent time.Time) fence.Lease {
	d.obs.Forget(d.table, key)
	return fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl, ValidUntil: sent.Add(ttl)}
}

// takeable returns the condition under which Acquire may take key at now,
// and the expression values it uses.
func (d *store) takeable(key string, now time.Time) (string, map[string]types.AttributeValue) {
	free := "#h = :false"
	values := map[string]types.AttributeValue{
		":false": &types.AttributeValueMemberBOOL{Value: false},
		":max":   &types.AttributeValueMemberN{Value: belowMax},
	}
	if d.mode.TrustedClock {
		free += " OR #e < :cut"
		values[":cut"] = &types.AttributeValueMemberN{Value: itoa(d.cut(now))}
	} else if seen, ok := d.obs.Expired(d.table, key, now); ok {
		free += " OR #v = :seen"
		values[":seen"] = &types.AttributeValueMemberS{Value: seen.Version}
	}
	// An existing item must also have a numeric token from 1 to one
	// below the largest: a corrupted one fails the condition and is
	// reported, not written over.
	return "attribute_not_exists(#k) OR (#t BETWEEN :one AND :max AND (" + free + "))", values
}

// maxToken is the largest token, as a DynamoDB number; belowMax is the
// largest an Acquire can increment.
var (
	maxToken = fence.Token(math.MaxUint64).String()
	belowMax = fence.Token(math.MaxUint64 - 1).String()
)
