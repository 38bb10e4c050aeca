package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// backend names the package in errors: "fence/dynamo: put "k": ...".
const backend = "dynamo"

// store is the driver.Resource under a Resource's portable
// methods: each is one request on the item of the key (a read-back
// follows only a failed or ambiguous write). Keys and tokens come checked
// by the fence.Resource.
type store struct{ r *Resource }

var _ driver.Resource = (*store)(nil)

// ResourceInfo implements driver.Resource. DynamoDB numbers hold 38
// digits, so every token fits.
func (d *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: backend, MaxKeyLen: MaxKeyLen}
}

// item returns the DynamoDB key of key.
func (d *store) item(key string) (map[string]types.AttributeValue, error) {
	if sk := d.r.o.SortKeyAttribute; sk != "" {
		return nil, fmt.Errorf("the table has a sort key %q, so a key names no single item; use the item methods: %w", sk, errors.ErrUnsupported)
	}
	return map[string]types.AttributeValue{d.r.o.KeyAttribute: &types.AttributeValueMemberS{Value: key}}, nil
}

// Put implements driver.Resource with a fenced PutItem.
func (d *store) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	k, err := d.item(key)
	if err != nil {
		return err
	}
	w := d.r.newWrite("put", token, k)
	if value == nil {
		value = []byte{}
	}
	item := map[string]types.AttributeValue{d.r.o.KeyAttribute: k[d.r.o.KeyAttribute], d.r.o.ValueAttribute: &types.AttributeValueMemberB{Value: value}}
	_, err = d.r.sendPut(ctx, w, &dynamodb.PutItemInput{Item: item}, nil)
	return err
}

// Delete implements driver.Resource with a fenced DeleteItem, which
// leaves a tombstone.
func (d *store) Delete(ctx context.Context, key string, token fence.Token) error {
	k, err := d.item(key)
	if err != nil {
		return err
	}
	_, err = d.r.sendDelete(ctx, d.r.newWrite("delete", token, k), &dynamodb.DeleteItemInput{}, nil)
	return err
}

// Get implements driver.Resource with a consistent read. An absent
// key gets a *fence.NotFoundError telling a tombstone from a key never
// written; an item whose fence or value attribute is missing or of the
// wrong type gets a *fence.CorruptError.
func (d *store) Get(ctx context.Context, key string) ([]byte, fence.Token, error) {
	k, err := d.item(key)
	if err != nil {
		return nil, 0, err
	}
	item, err := d.r.read(ctx, k)
	if err != nil {
		return nil, 0, err
	}
	if item == nil {
		return nil, 0, &fence.NotFoundError{Key: key}
	}
	o := d.r.o
	tok, err := parseFence(key, o.FenceAttribute, item[o.FenceAttribute])
	if err != nil {
		return nil, 0, err
	}
	if tok == 0 {
		return nil, 0, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("item has no fence attribute %q", o.FenceAttribute)}
	}
	if _, tomb := item[o.TombstoneAttribute]; tomb {
		return nil, 0, &fence.NotFoundError{Key: key, Tombstone: true}
	}
	v, ok := item[o.ValueAttribute].(*types.AttributeValueMemberB)
	if !ok {
		return nil, 0, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value attribute %q is %s, not binary", o.ValueAttribute, typeName(item[o.ValueAttribute]))}
	}
	return v.Value, tok, nil
}

// Highest implements driver.Resource with a consistent read.
func (d *store) Highest(ctx context.Context, key string) (fence.Token, error) {
	k, err := d.item(key)
	if err != nil {
		return 0, err
	}
	return d.r.highest(ctx, k)
}

// read returns the item under key with a consistent read; nil when there
// is none.
func (r *Resource) read(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := r.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.table),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, storeErr(err)
	}
	return out.Item, nil
}

// storeErr returns err, marked with fence.StoreMissing when it is
// DynamoDB's answer for a table that does not exist.
func storeErr(err error) error {
	if _, ok := errors.AsType[*types.ResourceNotFoundException](err); ok {
		return driver.StoreMissing(err)
	}
	return err
}

// opErr wraps the error of an item method in a *fence.OpError naming the
// item of key (nil when the input held no valid key).
func (r *Resource) opErr(op string, key map[string]types.AttributeValue, err error) error {
	var desc string
	if k, kerr := r.key("", key, false); kerr == nil {
		desc = r.describeKey(k)
	}
	return &fence.OpError{Backend: backend, Op: op, Key: desc, Err: err}
}
