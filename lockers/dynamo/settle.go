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
	"github.com/fencekit/fence/driver"
)

// outcome is what a failed conditional write found in the store.
type outcome struct {
	// condFailed: DynamoDB answered that the condition was false.
	condFailed bool
	// found and rec: the item as read after the failure.
	found bool
	rec   record
	// applied: the item carries the version the write sent, so the write
	// (an earlier attempt of it whose answer was lost) was applied.
	applied bool
	// at is when the item was read, on d's clock.
	at time.Time
	// err is the write's error, for callers that return it.
	err error
}

// settle finds out what became of a conditional write that carried version
// and failed with err. The item comes with the error when DynamoDB returns
// it (ReturnValuesOnConditionCheckFailure); otherwise it is read with a
// consistent GetItem, unless ctx is done or the table is missing. It
// returns an error when the outcome cannot be learnt (ctx done, the table
// missing, the read failed) or the item is corrupt.
func (d *store) settle(ctx context.Context, key, version string, err error) (outcome, error) {
	o := outcome{err: sdkError("UpdateItem", err)}
	ccf, isCCF := errors.AsType[*types.ConditionalCheckFailedException](err)
	o.condFailed = isCCF
	var item map[string]types.AttributeValue
	if isCCF && len(ccf.Item) > 0 {
		item = ccf.Item
	} else {
		if ctx.Err() != nil || errors.Is(o.err, fence.ErrStoreMissing) {
			return outcome{}, o.err
		}
		var rerr error
		if item, rerr = d.read(ctx, key); rerr != nil {
			return outcome{}, fmt.Errorf("%w; reading the item back: %w", o.err, rerr)
		}
	}
	o.at = d.clock.Now()
	r, found, perr := parseItem(key, item)
	if perr != nil {
		return outcome{}, perr
	}
	o.rec, o.found = r, found
	o.applied = found && r.version == version
	return o, nil
}

// read returns key's item with a consistent read; nil if there is none.
func (d *store) read(ctx context.Context, key string) (map[string]types.AttributeValue, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(d.table),
		Key:            d.itemKey(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, sdkError("GetItem", err)
	}
	return out.Item, nil
}

// itemKey is the primary key of key's item.
func (d *store) itemKey(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{d.keyAttr: &types.AttributeValueMemberS{Value: key}}
}

// names maps the placeholders of every expression to the attributes.
// DynamoDB rejects placeholders an expression does not use, so each
// method passes only the ones it uses; none means those of the lease
// (all but the value's).
func (d *store) names(placeholders ...string) map[string]string {
	if len(placeholders) == 0 {
		placeholders = []string{"#k", "#o", "#t", "#v", "#l", "#e", "#h"}
	}
	out := make(map[string]string, len(placeholders))
	for _, p := range placeholders {
		out[p] = d.attrName(p)
	}
	return out
}

// attrName returns the attribute of placeholder p.
func (d *store) attrName(p string) string {
	switch p {
	case "#k":
		return d.keyAttr
	case "#o":
		return attrOwner
	case "#t":
		return attrToken
	case "#v":
		return attrVersion
	case "#l":
		return attrLease
	case "#e":
		return attrExpires
	case "#h":
		return attrHeld
	case "#pv":
		return attrValue
	case "#pt":
		return attrValueToken
	}
	panic("dynamo: unknown placeholder " + p)
}

// sdkError names the call that failed with err. A table that does not
// exist (ResourceNotFoundException) also matches fence.ErrStoreMissing.
func sdkError(call string, err error) error {
	err = fmt.Errorf("%s: %w", call, err)
	if _, missing := errors.AsType[*types.ResourceNotFoundException](err); missing {
		return driver.StoreMissing(err)
	}
	return err
}
