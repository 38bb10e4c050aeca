package dynamo

import (
	"context"
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
// for a read that sees every acknowledged write. Errors are as for
// PutItem.
func GetItem(ctx context.Context, r *fence.Resource, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	s, err := storeOf(r, "get item")
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, s.opErr("get item", nil, &fence.InvalidError{Field: "input", Reason: "nil"})
	}
	out, err := s.getItem(ctx, in, optFns)
	if err != nil {
		return nil, s.opErr("get item", in.Key, err)
	}
	return out, nil
}

func (r *store) getItem(ctx context.Context, in *dynamodb.GetItemInput, optFns []func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if _, err := r.key("Key", in.Key, true); err != nil {
		return nil, err
	}
	if err := r.checkTable(in.TableName); err != nil {
		return nil, err
	}
	if err := checkNames(in.ExpressionAttributeNames); err != nil {
		return nil, err
	}
	req := *in
	req.TableName = aws.String(r.table)
	if p := aws.ToString(in.ProjectionExpression); strings.TrimSpace(p) != "" {
		req.ProjectionExpression = aws.String(p + ", " + nameTombstone)
		req.ExpressionAttributeNames = maps.Clone(in.ExpressionAttributeNames)
		if req.ExpressionAttributeNames == nil {
			req.ExpressionAttributeNames = map[string]string{}
		}
		req.ExpressionAttributeNames[nameTombstone] = r.o.TombstoneAttribute
	}
	if len(in.AttributesToGet) > 0 && !slices.Contains(in.AttributesToGet, r.o.TombstoneAttribute) {
		req.AttributesToGet = append(slices.Clone(in.AttributesToGet), r.o.TombstoneAttribute)
	}
	out, err := r.api.GetItem(ctx, &req, optFns...)
	if err != nil {
		return nil, storeErr(err)
	}
	out.Item = r.visible(out.Item)
	return out, nil
}

// HighestItem returns the highest token the item under key has accepted,
// tombstones included, with a consistent read: 0 when there is no item or
// it has no fence attribute. A fence attribute that is not a positive
// integer gets a *fence.CorruptError. Errors are as for PutItem.
func HighestItem(ctx context.Context, r *fence.Resource, key map[string]types.AttributeValue) (fence.Token, error) {
	s, err := storeOf(r, "highest item")
	if err != nil {
		return 0, err
	}
	k, err := s.key("key", key, true)
	if err != nil {
		return 0, s.opErr("highest item", nil, err)
	}
	t, err := s.highest(ctx, k)
	if err != nil {
		return 0, s.opErr("highest item", k, err)
	}
	return t, nil
}

// highest reads the fence of the item under a checked key.
func (r *store) highest(ctx context.Context, key map[string]types.AttributeValue) (fence.Token, error) {
	out, err := r.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(r.table),
		Key:                      key,
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String(nameFence),
		ExpressionAttributeNames: map[string]string{nameFence: r.o.FenceAttribute},
	})
	if err != nil {
		return 0, storeErr(err)
	}
	return parseFence(r.describeKey(key), r.o.FenceAttribute, out.Item[r.o.FenceAttribute])
}
