package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// MaxLockAllKeys is the most keys that fence.Session.LockAll takes in
// one DynamoDB transaction: the item limit of TransactWriteItems. A
// larger set is taken one key at a time.
const MaxLockAllKeys = 100

// TransactAPI is the part of the DynamoDB client that takes several keys
// in one transaction, for fence.Session.LockAll. *dynamodb.Client
// satisfies it; a client given to New that does not takes the keys one at
// a time.
type TransactAPI interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// txStore is a store whose client makes transactions: a
// driver.MultiAcquirer.
type txStore struct {
	*store
	tx TransactAPI
	// none is set once the endpoint answered that it knows no
	// TransactWriteItems (an emulator): LockAll then takes one key at a
	// time without asking again.
	none atomic.Bool
}

var _ driver.MultiAcquirer = (*txStore)(nil)

// driver returns the driver.Locker of d: a MultiAcquirer when its client
// makes transactions.
func (d *store) driver() driver.Locker {
	if tx, ok := d.api.(TransactAPI); ok {
		return &txStore{store: d, tx: tx}
	}
	return d
}

// errNoTransactions is AcquireAll's answer on an endpoint without
// TransactWriteItems.
var errNoTransactions = fmt.Errorf("the endpoint has no TransactWriteItems: %w", errors.ErrUnsupported)

// AcquireAll implements driver.MultiAcquirer in two requests for up to
// MaxLockAllKeys keys: one consistent BatchGetItem reads every item and
// decides as Acquire does (a key held, or not yet expired for this
// Locker, is a *fence.HeldError and nothing is written), then one
// TransactWriteItems writes every lease, each update conditional on the
// version read (or on the item's absence) and setting the next token.
// A condition that failed in between (CancellationReasons name the item)
// is a *fence.HeldError for that key when the item now holds a lease,
// else driver.ErrAcquireRaced, and the transaction wrote nothing. The
// SDK repeats a request whose answer was lost with the same
// ClientRequestToken, which DynamoDB applies once. More keys give an error
// matching errors.ErrUnsupported before any request; so does an endpoint
// that knows no TransactWriteItems (an emulator), after the read, which
// still refuses a busy key without a write.
func (d *txStore) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	if len(keys) > MaxLockAllKeys {
		return nil, fmt.Errorf("%d keys are more than the %d items of one transaction: %w", len(keys), MaxLockAllKeys, errors.ErrUnsupported)
	}
	items, err := d.readAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	now := d.clock.Now()
	tokens := make([]fence.Token, len(keys))
	conds := make([]string, len(keys))
	seen := make([]string, len(keys))
	for i, key := range keys {
		r, found, err := parseItem(key, items[key])
		switch {
		case err != nil:
			return nil, err
		case !found:
			tokens[i], conds[i] = 1, "attribute_not_exists(#k)"
			continue
		case r.token == math.MaxUint64:
			return nil, &fence.CorruptError{Key: key, Reason: "the token is the largest there is; no higher one can be issued"}
		}
		if held, until := d.holding(key, r, now); held {
			return nil, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: until}
		}
		tokens[i], conds[i], seen[i] = r.token+1, "#v = :seen", r.version
	}
	if d.none.Load() {
		// A busy key was refused above without a write; the rest the
		// Session takes one at a time.
		return nil, errNoTransactions
	}
	sent := d.clock.Now()
	writes := make([]types.TransactWriteItem, len(keys))
	for i, key := range keys {
		values := map[string]types.AttributeValue{
			":o":    &types.AttributeValueMemberS{Value: owners[i]},
			":v":    &types.AttributeValueMemberS{Value: newVersion()},
			":l":    millis(ttl),
			":e":    expiry(sent, ttl),
			":true": &types.AttributeValueMemberBOOL{Value: true},
			":t":    &types.AttributeValueMemberN{Value: tokens[i].String()},
		}
		names := d.names("#k", "#o", "#v", "#l", "#e", "#h", "#t")
		if seen[i] != "" {
			values[":seen"] = &types.AttributeValueMemberS{Value: seen[i]}
			delete(names, "#k")
		}
		writes[i] = types.TransactWriteItem{Update: &types.Update{
			TableName:                           aws.String(d.table),
			Key:                                 d.itemKey(key),
			UpdateExpression:                    aws.String("SET #o = :o, #v = :v, #l = :l, #e = :e, #h = :true, #t = :t"),
			ConditionExpression:                 aws.String(conds[i]),
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}}
	}
	_, err = d.tx.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	if err != nil {
		return nil, d.cancelled(keys, err)
	}
	leases := make([]fence.Lease, len(keys))
	for i, key := range keys {
		leases[i] = d.won(key, owners[i], tokens[i], ttl, sent)
	}
	return leases, nil
}

// cancelled maps the error of a failed transaction over keys: a
// *fence.HeldError for a key whose condition failed and which now holds a
// lease, driver.ErrAcquireRaced when the conditions failed otherwise, an
// error matching errors.ErrUnsupported when the endpoint has no
// transactions, and the SDK's error (an unknown outcome) otherwise.
func (d *txStore) cancelled(keys []string, err error) error {
	if ce, ok := errors.AsType[*types.TransactionCanceledException](err); ok {
		raced := true
		for i, reason := range ce.CancellationReasons {
			switch code := aws.ToString(reason.Code); {
			case code == "" || code == "None" || code == "TransactionConflict":
				continue
			case code != "ConditionalCheckFailed" || i >= len(keys):
				raced = false // throttled, say: not a race
				continue
			}
			r, found, perr := parseItem(keys[i], reason.Item)
			if perr != nil {
				return perr
			}
			if !found {
				continue
			}
			if held, until := d.holding(keys[i], r, d.clock.Now()); held {
				return &fence.HeldError{Key: keys[i], Owner: r.owner, Token: r.token, ValidUntil: until}
			}
		}
		if raced {
			// Changed since the read but free, or a conflict with another
			// transaction: nothing was written.
			return driver.ErrAcquireRaced
		}
		// Cancelled for another reason (throttling): nothing was written.
		return sdkError("TransactWriteItems", err)
	}
	if code, ok := errors.AsType[apiError](err); ok && code.ErrorCode() == "UnknownOperationException" {
		d.none.Store(true)
		return fmt.Errorf("%w (%w)", errNoTransactions, sdkError("TransactWriteItems", err))
	}
	return sdkError("TransactWriteItems", err)
}

// apiError is the SDK's error of a refusal by the service
// (smithy.APIError).
type apiError interface {
	error
	ErrorCode() string
}

// readAll reads the items of keys (at most 100) with consistent
// BatchGetItem requests, one unless DynamoDB leaves keys unprocessed
// (throttling), which are asked again after a backoff until ctx ends. A
// key without an item is missing from the map.
func (d *txStore) readAll(ctx context.Context, keys []string) (map[string]map[string]types.AttributeValue, error) {
	want := make([]map[string]types.AttributeValue, len(keys))
	for i, key := range keys {
		want[i] = d.itemKey(key)
	}
	items := make(map[string]map[string]types.AttributeValue, len(keys))
	pause := backoff.Policy{First: 20 * time.Millisecond, Max: time.Second}
	for attempt := 1; ; attempt++ {
		out, err := d.tx.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			d.table: {
				Keys:                     want,
				ConsistentRead:           aws.Bool(true),
				ProjectionExpression:     aws.String("#k, #o, #t, #v, #l, #e, #h"),
				ExpressionAttributeNames: d.names(),
			},
		}})
		if err != nil {
			return nil, sdkError("BatchGetItem", err)
		}
		for _, item := range out.Responses[d.table] {
			if k, ok := item[d.keyAttr].(*types.AttributeValueMemberS); ok {
				delete(item, d.keyAttr)
				items[k.Value] = item
			}
		}
		left, ok := out.UnprocessedKeys[d.table]
		if !ok || len(left.Keys) == 0 {
			return items, nil
		}
		want = left.Keys
		if err := backoff.Sleep(ctx, pause.Delay(attempt)); err != nil {
			return nil, fmt.Errorf("BatchGetItem: %d keys left unprocessed: %w", len(want), err)
		}
	}
}
