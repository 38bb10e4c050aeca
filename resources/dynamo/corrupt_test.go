package dynamo_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// corruptions are fence attributes someone set by hand, with a token that
// the fence condition must refuse on each. A fractional fence between 1
// and the token (1.5 with token 2) would pass the condition: expressions
// cannot test for an integer. Only reads report it as corrupt (see
// TestCorruptFenceOnRead).
var corruptions = []struct {
	desc  string
	fence types.AttributeValue
	token fence.Token
}{
	{"a string", &types.AttributeValueMemberS{Value: "7"}, 9},
	{"zero", &types.AttributeValueMemberN{Value: "0"}, 9},
	{"negative", &types.AttributeValueMemberN{Value: "-3"}, 9},
	{"a boolean", &types.AttributeValueMemberBOOL{Value: true}, 9},
	{"a fraction above the token", &types.AttributeValueMemberN{Value: "1.5"}, 1},
	{"above 64 bits", &types.AttributeValueMemberN{Value: "18446744073709551616"}, 9},
}

// TestCorruptFenceRefusesWrites: every fenced write on an item whose
// fence attribute was corrupted by hand fails with fence.ErrCorrupt and
// leaves the item untouched.
func TestCorruptFenceRefusesWrites(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	for _, cr := range corruptions {
		for _, op := range []string{"put", "update", "delete", "highest"} {
			t.Run(cr.desc+"/"+op, func(t *testing.T) {
				t.Parallel()
				id := t.Name()
				stored := withKey(id, map[string]types.AttributeValue{"v": s("keep"), dynamo.DefaultFenceAttribute: cr.fence})
				if _, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(dynamo.TableOf(tb)), Item: stored}); err != nil {
					t.Fatalf("raw PutItem: %v", err)
				}
				var err error
				switch op {
				case "put":
					_, err = dynamo.PutItem(t.Context(), tb, cr.token, &dynamodb.PutItemInput{Item: withKey(id, map[string]types.AttributeValue{"v": s("new")})})
				case "update":
					_, err = dynamo.UpdateItem(t.Context(), tb, cr.token, &dynamodb.UpdateItemInput{Key: key(id), UpdateExpression: aws.String("SET v = :v"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("new")}})
				case "delete":
					_, err = dynamo.DeleteItem(t.Context(), tb, cr.token, &dynamodb.DeleteItemInput{Key: key(id)})
				case "highest":
					_, err = dynamo.HighestItem(t.Context(), tb, key(id))
				}
				var ce *fence.CorruptError
				if !errors.Is(err, fence.ErrCorrupt) || !errors.As(err, &ce) {
					t.Fatalf("%s on a fence that is %s = %v; want a *fence.CorruptError", op, cr.desc, err)
				}
				if errors.Is(err, fence.ErrInvalid) {
					t.Errorf("%s on a fence that is %s = %v matches fence.ErrInvalid; a corrupted record is not bad input", op, cr.desc, err)
				}
				if got := raw(t, c, tb, key(id)); !maps.EqualFunc(got, stored, sameValue) {
					t.Errorf("%s changed the corrupted item: %v, was %v", op, got, stored)
				}
			})
		}
	}
}

// TestCorruptFenceOnRead: the portable Get and Highest report a corrupted
// fence or value attribute.
func TestCorruptFenceOnRead(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	table := createTable(t, c, nil)
	r, err := dynamo.New(c, table, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc     string
		item     map[string]types.AttributeValue
		badFence bool // Highest fails too
	}{
		{"fence a string", map[string]types.AttributeValue{"value": &types.AttributeValueMemberB{Value: []byte("v")}, dynamo.DefaultFenceAttribute: s("3")}, true},
		{"fence a fraction", map[string]types.AttributeValue{"value": &types.AttributeValueMemberB{Value: []byte("v")}, dynamo.DefaultFenceAttribute: n("1.5")}, true},
		{"fence zero", map[string]types.AttributeValue{"value": &types.AttributeValueMemberB{Value: []byte("v")}, dynamo.DefaultFenceAttribute: n("0")}, true},
		{"fence missing", map[string]types.AttributeValue{"value": &types.AttributeValueMemberB{Value: []byte("v")}}, false},
		{"value a string", map[string]types.AttributeValue{"value": s("v"), dynamo.DefaultFenceAttribute: n("3")}, false},
		{"value missing", map[string]types.AttributeValue{dynamo.DefaultFenceAttribute: n("3")}, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			item := maps.Clone(tc.item)
			item[dynamo.DefaultKeyAttribute] = s(t.Name())
			if _, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
				t.Fatalf("raw PutItem: %v", err)
			}
			if _, _, err := r.Get(t.Context(), t.Name()); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Get = %v; want an error matching fence.ErrCorrupt", err)
			}
			_, err := r.Highest(t.Context(), t.Name())
			if tc.badFence != errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Highest = %v; want an error matching fence.ErrCorrupt: %v", err, tc.badFence)
			}
		})
	}
}

// sameValue compares scalar attribute values.
func sameValue(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		b, ok := b.(*types.AttributeValueMemberS)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberN:
		b, ok := b.(*types.AttributeValueMemberN)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberBOOL:
		b, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && a.Value == b.Value
	}
	return false
}
