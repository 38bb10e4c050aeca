package dynamo_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// wantKind checks that err is nil ("ok"), a stale-token error with the
// given highest ("stale"), or the caller's condition failing ("cond").
func wantKind(t *testing.T, call string, err error, kind string, highest fence.Token) {
	t.Helper()
	switch kind {
	case "ok":
		if err != nil {
			t.Fatalf("%s = %v; want success", call, err)
		}
	case "stale":
		var se *fence.StaleTokenError
		if !errors.As(err, &se) || !errors.Is(err, fence.ErrStaleToken) {
			t.Fatalf("%s = %v; want a *fence.StaleTokenError", call, err)
		}
		if se.Highest != highest {
			t.Errorf("%s: Highest = %d, want %d", call, se.Highest, highest)
		}
		if errors.Is(err, dynamo.ErrConditionFailed) {
			t.Errorf("%s = %v also matches ErrConditionFailed", call, err)
		}
	case "cond":
		var ce *dynamo.ConditionFailedError
		if !errors.As(err, &ce) || !errors.Is(err, dynamo.ErrConditionFailed) {
			t.Fatalf("%s = %v; want a *dynamo.ConditionFailedError", call, err)
		}
		if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); !ok {
			t.Errorf("%s = %v does not wrap the SDK's ConditionalCheckFailedException", call, err)
		}
		if errors.Is(err, fence.ErrStaleToken) {
			t.Errorf("%s = %v also matches ErrStaleToken", call, err)
		}
	default:
		t.Fatalf("unknown kind %q", kind)
	}
}

// TestPutItemTellsStaleFromConditionFailed writes an item with status
// "open" and token 5, then puts with the caller's condition on the status
// and various tokens.
func TestPutItemTellsStaleFromConditionFailed(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	cond := aws.String("#st = :want")
	for _, tc := range []struct {
		desc  string
		token fence.Token
		want  string // status the condition requires
		kind  string
	}{
		{"higher token, condition holds", 6, "open", "ok"},
		{"equal token, condition holds", 5, "open", "ok"},
		{"higher token, condition fails", 6, "closed", "cond"},
		{"equal token, condition fails", 5, "closed", "cond"},
		{"lower token, condition holds", 4, "open", "stale"},
		{"lower token, condition fails", 4, "closed", "stale"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			id := t.Name()
			if _, err := dynamo.PutItem(t.Context(), tb, 5, &dynamodb.PutItemInput{Item: withKey(id, map[string]types.AttributeValue{"status": s("open")})}); err != nil {
				t.Fatalf("first PutItem: %v", err)
			}
			in := &dynamodb.PutItemInput{
				Item:                      withKey(id, map[string]types.AttributeValue{"status": s("done")}),
				ConditionExpression:       cond,
				ExpressionAttributeNames:  map[string]string{"#st": "status"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":want": s(tc.want)},
			}
			_, err := dynamo.PutItem(t.Context(), tb, tc.token, in)
			wantKind(t, "PutItem", err, tc.kind, 5)
			item := raw(t, c, tb, key(id))
			wantStatus, wantFence := "open", "5"
			if tc.kind == "ok" {
				wantStatus, wantFence = "done", tc.token.String()
			}
			if got := attr(item, "status"); got != wantStatus {
				t.Errorf("status = %s, want %s", got, wantStatus)
			}
			if got := attr(item, dynamo.DefaultFenceAttribute); got != wantFence {
				t.Errorf("fence = %s, want %s", got, wantFence)
			}
			// The caller's input is not modified.
			if len(in.ExpressionAttributeNames) != 1 || len(in.ExpressionAttributeValues) != 1 || len(in.Item) != 3 || *in.ConditionExpression != *cond || in.TableName != nil {
				t.Errorf("PutItem modified its input: %+v", in)
			}
		})
	}
}

// TestPutItemReturnValues: ALL_OLD gives the old item without the write
// id, and nothing when the old item was a tombstone.
func TestPutItemReturnValues(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	id := "rv"
	put := func(tok fence.Token, v string) map[string]types.AttributeValue {
		t.Helper()
		out, err := dynamo.PutItem(t.Context(), tb, tok, &dynamodb.PutItemInput{
			Item:         withKey(id, map[string]types.AttributeValue{"v": s(v)}),
			ReturnValues: types.ReturnValueAllOld,
		})
		if err != nil {
			t.Fatalf("PutItem(%d): %v", tok, err)
		}
		return out.Attributes
	}
	if old := put(1, "one"); old != nil {
		t.Errorf("first PutItem returned old attributes %v", old)
	}
	old := put(2, "two")
	if attr(old, "v") != "one" || attr(old, dynamo.DefaultFenceAttribute) != "1" {
		t.Errorf("old attributes = %v, want v=one and fence 1", old)
	}
	if _, ok := old[dynamo.DefaultWriteIDAttribute]; ok {
		t.Errorf("old attributes carry the write id: %v", old)
	}
	out, err := dynamo.DeleteItem(t.Context(), tb, 3, &dynamodb.DeleteItemInput{Key: key(id), ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		t.Fatalf("DeleteItem: %v", err)
	}
	if attr(out.Attributes, "v") != "two" {
		t.Errorf("DeleteItem old attributes = %v, want v=two", out.Attributes)
	}
	if old := put(4, "four"); old != nil {
		t.Errorf("PutItem over a tombstone returned old attributes %v", old)
	}
}
