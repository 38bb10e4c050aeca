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

// store is the driver.Resource under the *fence.Resource of New: one
// table, through api. Its portable methods are each one request on the
// item of the key (a read-back follows only a failed or ambiguous write);
// keys and tokens come checked by the fence.Resource. The item functions
// (PutItem, ...) reach it through storeOf.
type store struct {
	api   API
	table string
	o     Options // defaults filled in
}

var (
	_ driver.Resource = (*store)(nil)
	_ driver.Creator  = (*store)(nil)
	_ driver.Aser     = (*store)(nil)
)

// storeOf returns the store under r, or a *fence.OpError of op around a
// *fence.InvalidError when r is nil or not a resource of New.
func storeOf(r *fence.Resource, op string) (*store, error) {
	if r == nil {
		return nil, &fence.OpError{Backend: backend, Op: op, Err: &fence.InvalidError{Field: "resource", Reason: "nil"}}
	}
	s, ok := driver.ResourceOf(r).(*store)
	if !ok {
		return nil, &fence.OpError{Backend: backend, Op: op, Err: &fence.InvalidError{Field: "resource", Reason: fmt.Sprintf("a %s resource, not one of dynamo.New", r.Name())}}
	}
	return s, nil
}

// As implements driver.Aser: a *API target gets the client New was
// given, and a **dynamodb.Client target gets it when it is one.
func (r *store) As(target any) bool {
	switch p := target.(type) {
	case *API:
		*p = r.api
		return true
	case **dynamodb.Client:
		c, ok := r.api.(*dynamodb.Client)
		if ok {
			*p = c
		}
		return ok
	}
	return false
}

// Create implements driver.Creator: it creates the table of r's Options
// (string keys), if the client can (a *dynamodb.Client can), and waits
// until it is ACTIVE.
func (r *store) Create(ctx context.Context) error {
	api, ok := r.api.(tableAPI)
	if !ok {
		return fmt.Errorf("the client %T has no CreateTable and DescribeTable: %w", r.api, errors.ErrUnsupported)
	}
	return createTable(ctx, api, r.table, &tableOptions{KeyAttribute: r.o.KeyAttribute, SortKeyAttribute: r.o.SortKeyAttribute})
}

// ResourceInfo implements driver.Resource. DynamoDB numbers hold 38
// digits, so every token fits.
func (r *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: backend, MaxKeyLen: MaxKeyLen}
}

// item returns the DynamoDB key of key.
func (r *store) item(key string) (map[string]types.AttributeValue, error) {
	if sk := r.o.SortKeyAttribute; sk != "" {
		return nil, fmt.Errorf("the table has a sort key %q, so a key names no single item; use the item functions: %w", sk, errors.ErrUnsupported)
	}
	return map[string]types.AttributeValue{r.o.KeyAttribute: &types.AttributeValueMemberS{Value: key}}, nil
}

// Put implements driver.Resource with a fenced PutItem.
func (r *store) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	k, err := r.item(key)
	if err != nil {
		return err
	}
	w := r.newWrite("put", token, k)
	if value == nil {
		value = []byte{}
	}
	item := map[string]types.AttributeValue{r.o.KeyAttribute: k[r.o.KeyAttribute], r.o.ValueAttribute: &types.AttributeValueMemberB{Value: value}}
	_, err = r.sendPut(ctx, w, &dynamodb.PutItemInput{Item: item}, nil)
	return err
}

// Delete implements driver.Resource with a fenced DeleteItem, which
// leaves a tombstone.
func (r *store) Delete(ctx context.Context, key string, token fence.Token) error {
	k, err := r.item(key)
	if err != nil {
		return err
	}
	_, err = r.sendDelete(ctx, r.newWrite("delete", token, k), &dynamodb.DeleteItemInput{}, nil)
	return err
}

// Get implements driver.Resource with a consistent read. An absent
// key gets a *fence.NotFoundError telling a tombstone from a key never
// written; an item whose fence or value attribute is missing or of the
// wrong type gets a *fence.CorruptError.
func (r *store) Get(ctx context.Context, key string) ([]byte, fence.Token, error) {
	k, err := r.item(key)
	if err != nil {
		return nil, 0, err
	}
	item, err := r.read(ctx, k)
	if err != nil {
		return nil, 0, err
	}
	if item == nil {
		return nil, 0, &fence.NotFoundError{Key: key}
	}
	o := r.o
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
func (r *store) Highest(ctx context.Context, key string) (fence.Token, error) {
	k, err := r.item(key)
	if err != nil {
		return 0, err
	}
	return r.highest(ctx, k)
}

// read returns the item under key with a consistent read; nil when there
// is none.
func (r *store) read(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
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
func (r *store) opErr(op string, key map[string]types.AttributeValue, err error) error {
	var desc string
	if k, kerr := r.key("", key, false); kerr == nil {
		desc = r.describeKey(k)
	}
	return &fence.OpError{Backend: backend, Op: op, Key: desc, Err: err}
}
