package dynamo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// GetItem reads the item under in.Key like the SDK's GetItem, but reports
// a tombstone (a deleted item) as absent: Item is nil. A projection
// (ProjectionExpression or AttributesToGet) is extended with the tombstone
// attribute so that tombstones are still recognised; the write id
// attribute is never returned. in is not modified. Pass ConsistentRead
// for a read that sees every acknowledged write.
func (t *Table) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if in == nil {
		return nil, &fence.InvalidError{Field: "input", Reason: "nil"}
	}
	if _, err := t.key("Key", in.Key, true); err != nil {
		return nil, err
	}
	if err := t.checkTable(in.TableName); err != nil {
		return nil, err
	}
	if err := checkNames(in.ExpressionAttributeNames); err != nil {
		return nil, err
	}
	req := *in
	req.TableName = aws.String(t.o.Table)
	if p := aws.ToString(in.ProjectionExpression); strings.TrimSpace(p) != "" {
		req.ProjectionExpression = aws.String(p + ", " + nameTombstone)
		req.ExpressionAttributeNames = maps.Clone(in.ExpressionAttributeNames)
		if req.ExpressionAttributeNames == nil {
			req.ExpressionAttributeNames = map[string]string{}
		}
		req.ExpressionAttributeNames[nameTombstone] = t.o.TombstoneAttribute
	}
	if len(in.AttributesToGet) > 0 && !slices.Contains(in.AttributesToGet, t.o.TombstoneAttribute) {
		req.AttributesToGet = append(slices.Clone(in.AttributesToGet), t.o.TombstoneAttribute)
	}
	out, err := t.api.GetItem(ctx, &req, optFns...)
	if err != nil {
		return nil, fmt.Errorf("fence/dynamo: get %q: %w", t.describeKey(in.Key), err)
	}
	out.Item = t.visible(out.Item)
	return out, nil
}

// Highest returns the highest token the item under key has accepted,
// tombstones included, with a consistent read: 0 when there is no item or
// it has no fence attribute. A fence attribute that is not a positive
// integer gets a *fence.CorruptError.
func (t *Table) Highest(ctx context.Context, key map[string]types.AttributeValue) (fence.Token, error) {
	key, err := t.key("key", key, true)
	if err != nil {
		return 0, err
	}
	resource := t.describeKey(key)
	out, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(t.o.Table),
		Key:                      key,
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String(nameFence),
		ExpressionAttributeNames: map[string]string{nameFence: t.o.FenceAttribute},
	})
	if err != nil {
		return 0, fmt.Errorf("fence/dynamo: read the fence of %q: %w", resource, err)
	}
	return parseFence(resource, t.o.FenceAttribute, out.Item[t.o.FenceAttribute])
}
