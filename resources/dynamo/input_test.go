package dynamo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// TestBadInputIsInvalid: every bad input gets an error matching
// fence.ErrInvalid before anything is sent, and nothing is written.
func TestBadInputIsInvalid(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	longPK := map[string]types.AttributeValue{"pk": s(strings.Repeat("é", dynamo.MaxPartitionKeyLen/2) + "x"), "sk": s("v")}
	longSK := map[string]types.AttributeValue{"pk": s("long-sk"), "sk": s(strings.Repeat("a", dynamo.MaxSortKeyLen+1))}
	longBin := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberB{Value: make([]byte, dynamo.MaxPartitionKeyLen+1)}, "sk": s("v")}
	put := func(tok fence.Token, in *dynamodb.PutItemInput) func() error {
		return func() error { _, err := dynamo.PutItem(t.Context(), tb, tok, in); return err }
	}
	update := func(tok fence.Token, in *dynamodb.UpdateItemInput) func() error {
		return func() error { _, err := dynamo.UpdateItem(t.Context(), tb, tok, in); return err }
	}
	del := func(tok fence.Token, in *dynamodb.DeleteItemInput) func() error {
		return func() error { _, err := dynamo.DeleteItem(t.Context(), tb, tok, in); return err }
	}
	for _, tc := range []struct {
		desc string
		key  map[string]types.AttributeValue // checked to be still absent
		call func() error
	}{
		{"PutItem token 0", key("zero"), put(0, &dynamodb.PutItemInput{Item: key("zero")})},
		{"UpdateItem token 0", key("zero"), update(0, &dynamodb.UpdateItemInput{Key: key("zero")})},
		{"DeleteItem token 0", key("zero"), del(0, &dynamodb.DeleteItemInput{Key: key("zero")})},
		{"PutItem nil input", nil, put(1, nil)},
		{"UpdateItem nil input", nil, update(1, nil)},
		{"DeleteItem nil input", nil, del(1, nil)},
		{"partition key one byte too long", nil, put(1, &dynamodb.PutItemInput{Item: longPK})},
		{"binary partition key one byte too long", nil, update(1, &dynamodb.UpdateItemInput{Key: longBin})},
		{"sort key one byte too long", nil, del(1, &dynamodb.DeleteItemInput{Key: longSK})},
		{"missing sort key", nil, put(1, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": s("nosk")}})},
		{"empty partition key", nil, put(1, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": s(""), "sk": s("v")}})},
		{"key of type BOOL", nil, put(1, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberBOOL{Value: true}, "sk": s("v")}})},
		{"Key with a non-key attribute", key("extra"), update(1, &dynamodb.UpdateItemInput{Key: withKey("extra", map[string]types.AttributeValue{"v": s("x")})})},
		{"item sets the fence attribute", key("sets"), put(1, &dynamodb.PutItemInput{Item: withKey("sets", map[string]types.AttributeValue{dynamo.DefaultFenceAttribute: n("99")})})},
		{"item sets the tombstone marker", key("sets"), put(1, &dynamodb.PutItemInput{Item: withKey("sets", map[string]types.AttributeValue{dynamo.DefaultTombstoneAttribute: s("x")})})},
		{"reserved name", key("res"), put(1, &dynamodb.PutItemInput{Item: key("res"), ConditionExpression: aws.String("attribute_not_exists(#fencekit_f)"),
			ExpressionAttributeNames: map[string]string{"#fencekit_f": "v"}})},
		{"reserved name in other case", key("res"), update(1, &dynamodb.UpdateItemInput{Key: key("res"), UpdateExpression: aws.String("SET #FenceKitX = :v"),
			ExpressionAttributeNames: map[string]string{"#FenceKitX": "v"}, ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("x")}})},
		{"reserved value", key("res"), del(1, &dynamodb.DeleteItemInput{Key: key("res"), ConditionExpression: aws.String("v = :fencekit_t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":fencekit_t": s("x")}})},
		{"legacy Expected", key("legacy"), put(1, &dynamodb.PutItemInput{Item: key("legacy"), Expected: map[string]types.ExpectedAttributeValue{"v": {Exists: aws.Bool(false)}}})},
		{"legacy ConditionalOperator", key("legacy"), del(1, &dynamodb.DeleteItemInput{Key: key("legacy"), ConditionalOperator: types.ConditionalOperatorAnd})},
		{"legacy AttributeUpdates", key("legacy"), update(1, &dynamodb.UpdateItemInput{Key: key("legacy"), AttributeUpdates: map[string]types.AttributeValueUpdate{"v": {Value: s("x")}}})},
		{"another table", key("other"), put(1, &dynamodb.PutItemInput{TableName: aws.String("someone-else"), Item: key("other")})},
		{"update expression without a keyword", key("expr"), update(1, &dynamodb.UpdateItemInput{Key: key("expr"), UpdateExpression: aws.String("v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("x")}})},
		{"update expression with SET twice", key("expr"), update(1, &dynamodb.UpdateItemInput{Key: key("expr"), UpdateExpression: aws.String("SET v = :v set w = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("x")}})},
		{"update expression with an empty clause", key("expr"), update(1, &dynamodb.UpdateItemInput{Key: key("expr"), UpdateExpression: aws.String("REMOVE SET v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("x")}})},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			var ie *fence.InvalidError
			if !errors.Is(err, fence.ErrInvalid) || !errors.As(err, &ie) {
				t.Fatalf("err = %v; want a *fence.InvalidError", err)
			}
			if _, ok := errors.AsType[*fence.OpError](err); !ok {
				t.Errorf("err = %v; want it in a *fence.OpError", err)
			}
			if tc.key != nil {
				if item := raw(t, c, tb, tc.key); item != nil {
					t.Errorf("an invalid call wrote %v", item)
				}
			}
		})
	}
}

// TestLongestKeysWork: a partition key of MaxPartitionKeyLen bytes and a
// sort key of MaxSortKeyLen bytes are accepted, by the package and by
// the emulator.
func TestLongestKeysWork(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	k := map[string]types.AttributeValue{"pk": s(strings.Repeat("名", dynamo.MaxPartitionKeyLen/3) + "ab"), "sk": s(strings.Repeat("z", dynamo.MaxSortKeyLen))}
	if _, err := dynamo.PutItem(t.Context(), tb, 3, &dynamodb.PutItemInput{Item: k}); err != nil {
		t.Fatalf("PutItem with the longest keys: %v", err)
	}
	if _, err := dynamo.DeleteItem(t.Context(), tb, 3, &dynamodb.DeleteItemInput{Key: k}); err != nil {
		t.Fatalf("DeleteItem with the longest keys: %v", err)
	}
	_, err := dynamo.UpdateItem(t.Context(), tb, 2, &dynamodb.UpdateItemInput{Key: k})
	wantKind(t, "UpdateItem(2) with the longest keys", err, "stale", 3)
}

// TestNewRefusesBadOptions checks the constructors' validation.
func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	var api dynamo.API = &dynamodb.Client{}
	for _, tc := range []struct {
		desc  string
		api   dynamo.API
		table string
		opts  dynamo.Options
	}{
		{"nil api", nil, "items", dynamo.Options{}},
		{"short table name", api, "ab", dynamo.Options{}},
		{"bad table name", api, "items/x", dynamo.Options{}},
		{"key attribute with NUL", api, "items", dynamo.Options{KeyAttribute: "k\x00"}},
		{"sort key equals key", api, "items", dynamo.Options{KeyAttribute: "pk", SortKeyAttribute: "pk"}},
		{"sort key is the default key", api, "items", dynamo.Options{SortKeyAttribute: dynamo.DefaultKeyAttribute}},
		{"fence attribute is the key", api, "items", dynamo.Options{KeyAttribute: "pk", FenceAttribute: "pk"}},
		{"tombstone is the fence", api, "items", dynamo.Options{TombstoneAttribute: dynamo.DefaultFenceAttribute}},
		{"write id with NUL", api, "items", dynamo.Options{WriteIDAttribute: "a\x00"}},
		{"value in the fence attribute", api, "items", dynamo.Options{ValueAttribute: dynamo.DefaultFenceAttribute}},
		{"value in the key", api, "items", dynamo.Options{ValueAttribute: dynamo.DefaultKeyAttribute}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			if _, err := dynamo.New(tc.api, tc.table, &tc.opts); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("New(%q, %+v) = %v; want an error matching fence.ErrInvalid", tc.table, tc.opts, err)
			}
		})
	}
	for _, opts := range []*dynamo.TableOptions{
		{KeyType: "BOOL"}, {SortKeyAttribute: dynamo.DefaultKeyAttribute}, {Wait: -1}, {KeyAttribute: "a\xff"}, {SortKeyAttribute: "sk", SortKeyType: "SS"},
	} {
		err := dynamo.CreateTable(t.Context(), &dynamodb.Client{}, "items", opts)
		if _, op := errors.AsType[*fence.OpError](err); !errors.Is(err, fence.ErrInvalid) || !op {
			t.Errorf("CreateTable(%+v) = %v; want an *fence.OpError matching ErrInvalid", opts, err)
		}
	}
	if err := dynamo.CreateTable(t.Context(), &dynamodb.Client{}, "x", nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("CreateTable of a bad table name = %v; want ErrInvalid", err)
	}
}

// TestCreateTableTwice: creating an existing table only waits for it.
func TestCreateTableTwice(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	name := createTable(t, c, &dynamo.TableOptions{KeyAttribute: "id", KeyType: types.ScalarAttributeTypeN})
	if err := dynamo.CreateTable(t.Context(), c, name, &dynamo.TableOptions{KeyAttribute: "id", KeyType: types.ScalarAttributeTypeN}); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
	tb, err := dynamo.New(c, name, &dynamo.Options{KeyAttribute: "id"})
	if err != nil {
		t.Fatal(err)
	}
	k := map[string]types.AttributeValue{"id": n("42")}
	if _, err := dynamo.PutItem(t.Context(), tb, 1, &dynamodb.PutItemInput{Item: k}); err != nil {
		t.Fatalf("PutItem with a number key: %v", err)
	}
	if h, err := dynamo.HighestItem(t.Context(), tb, k); err != nil || h != 1 {
		t.Errorf("HighestItem = %d, %v; want 1", h, err)
	}
}
