package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// Defaults of the portable Resource.
const (
	// DefaultPartitionKey is the string partition key attribute of a
	// Resource's table, holding the name.
	DefaultPartitionKey = "name"
	// DefaultValueAttribute is the binary attribute holding a value.
	DefaultValueAttribute = "value"
)

// MaxKeyLen is the longest name a Resource accepts, in bytes: DynamoDB's
// limit for a partition key.
const MaxKeyLen = MaxPartitionKeyLen

// ResourceOptions configure a Resource. A nil *ResourceOptions means all
// defaults.
type ResourceOptions struct {
	// PartitionKey names the table's partition key, of type S. Default:
	// DefaultPartitionKey.
	PartitionKey string
	// ValueAttribute names the binary attribute holding the value.
	// Default: DefaultValueAttribute.
	ValueAttribute string
	// FenceAttribute, TombstoneAttribute and WriteIDAttribute are as in
	// Options, with the same defaults.
	FenceAttribute, TombstoneAttribute, WriteIDAttribute string
}

// Resource is the portable form of the package, a fence.Resource: one
// item per name in a table whose only key is a string partition key (see
// CreateTable), the value in a binary attribute. Each method is one
// request (a read-back follows only a failed or ambiguous write). Create
// it with NewResource; it is safe for concurrent use.
type Resource struct {
	t     *Table
	value string
}

var _ fence.Resource = (*Resource)(nil)

// NewResource returns a Resource on table through api. opts may be nil.
func NewResource(api API, table string, opts *ResourceOptions) (*Resource, error) {
	var o ResourceOptions
	if opts != nil {
		o = *opts
	}
	if o.PartitionKey == "" {
		o.PartitionKey = DefaultPartitionKey
	}
	if o.ValueAttribute == "" {
		o.ValueAttribute = DefaultValueAttribute
	}
	t, err := New(api, Options{
		Table:              table,
		PartitionKey:       o.PartitionKey,
		FenceAttribute:     o.FenceAttribute,
		TombstoneAttribute: o.TombstoneAttribute,
		WriteIDAttribute:   o.WriteIDAttribute,
	})
	if err != nil {
		return nil, err
	}
	if err := fence.ValidateKey("ValueAttribute", o.ValueAttribute, maxAttributeNameLen); err != nil {
		return nil, err
	}
	to := t.Options()
	for _, a := range []string{to.PartitionKey, to.FenceAttribute, to.TombstoneAttribute, to.WriteIDAttribute} {
		if a == o.ValueAttribute {
			return nil, &fence.InvalidError{Field: "ValueAttribute", Reason: fmt.Sprintf("%q is also another attribute of the item", a)}
		}
	}
	return &Resource{t: t, value: o.ValueAttribute}, nil
}

// Table returns the Table the Resource writes through.
func (r *Resource) Table() *Table { return r.t }

// key returns the key of name, checked.
func (r *Resource) key(name string) (map[string]types.AttributeValue, error) {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return nil, err
	}
	return map[string]types.AttributeValue{r.t.o.PartitionKey: &types.AttributeValueMemberS{Value: name}}, nil
}

// Put implements fence.Resource with a fenced PutItem.
func (r *Resource) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	key, err := r.key(name)
	if err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	key[r.value] = &types.AttributeValueMemberB{Value: value}
	_, err = r.t.PutItem(ctx, token, &dynamodb.PutItemInput{Item: key})
	return err
}

// Delete implements fence.Resource with a fenced DeleteItem, which leaves
// a tombstone.
func (r *Resource) Delete(ctx context.Context, name string, token fence.Token) error {
	key, err := r.key(name)
	if err != nil {
		return err
	}
	_, err = r.t.DeleteItem(ctx, token, &dynamodb.DeleteItemInput{Key: key})
	return err
}

// Get implements fence.Resource with a consistent read. The error for an
// absent name is a *fence.NotFoundError telling a tombstone from a name
// never written; an item whose fence or value attribute is missing or of
// the wrong type gets a *fence.CorruptError.
func (r *Resource) Get(ctx context.Context, name string) ([]byte, fence.Token, error) {
	key, err := r.key(name)
	if err != nil {
		return nil, 0, err
	}
	out, err := r.t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.t.o.Table),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, 0, fmt.Errorf("fence/dynamo: get %q: %w", name, err)
	}
	if out.Item == nil {
		return nil, 0, &fence.NotFoundError{Key: name}
	}
	tok, err := parseFence(name, r.t.o.FenceAttribute, out.Item[r.t.o.FenceAttribute])
	if err != nil {
		return nil, 0, err
	}
	if tok == 0 {
		return nil, 0, &fence.CorruptError{Key: name, Reason: fmt.Sprintf("item has no fence attribute %q", r.t.o.FenceAttribute)}
	}
	if _, tomb := out.Item[r.t.o.TombstoneAttribute]; tomb {
		return nil, 0, &fence.NotFoundError{Key: name, Tombstone: true}
	}
	v, ok := out.Item[r.value].(*types.AttributeValueMemberB)
	if !ok {
		return nil, 0, &fence.CorruptError{Key: name, Reason: fmt.Sprintf("value attribute %q is %s, not binary", r.value, typeName(out.Item[r.value]))}
	}
	value := v.Value
	if value == nil {
		value = []byte{}
	}
	return value, tok, nil
}

// Highest implements fence.Resource with a consistent read.
func (r *Resource) Highest(ctx context.Context, name string) (fence.Token, error) {
	key, err := r.key(name)
	if err != nil {
		return 0, err
	}
	return r.t.Highest(ctx, key)
}
