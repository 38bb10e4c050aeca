package dynamo_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// TestUpdateItemKeepsTheCallersClauses runs update expressions with their
// clauses in various orders and cases on an item holding old = "x",
// tags = {a, b}, count = 1, and checks both the caller's effect and the
// fence.
func TestUpdateItemKeepsTheCallersClauses(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	for _, tc := range []struct {
		desc, expr string
		names      map[string]string
		values     map[string]types.AttributeValue
		// want: expected values of old, count, title, and the tags.
		old, count, title string
		tags              []string
	}{
		{desc: "empty expression raises the fence only", expr: "", old: "x", count: "1", title: "<absent>", tags: []string{"a", "b"}},
		{desc: "SET only", expr: "SET title = :t", values: map[string]types.AttributeValue{":t": s("new")},
			old: "x", count: "1", title: "new", tags: []string{"a", "b"}},
		{desc: "REMOVE before SET", expr: "REMOVE #o SET title = :t", names: map[string]string{"#o": "old"}, values: map[string]types.AttributeValue{":t": s("new")},
			old: "<absent>", count: "1", title: "new", tags: []string{"a", "b"}},
		{desc: "ADD without SET", expr: "ADD #c :one", names: map[string]string{"#c": "count"}, values: map[string]types.AttributeValue{":one": n("1")},
			old: "x", count: "2", title: "<absent>", tags: []string{"a", "b"}},
		{desc: "lower case keywords", expr: "set title = :t remove #o", names: map[string]string{"#o": "old"}, values: map[string]types.AttributeValue{":t": s("new")},
			old: "<absent>", count: "1", title: "new", tags: []string{"a", "b"}},
		{desc: "four clauses, SET in the middle", expr: "DELETE tags :a ADD #c :one SET title = if_not_exists(title, :t) REMOVE #o",
			names:  map[string]string{"#o": "old", "#c": "count"},
			values: map[string]types.AttributeValue{":t": s("new"), ":one": n("1"), ":a": &types.AttributeValueMemberSS{Value: []string{"a"}}},
			old:    "<absent>", count: "2", title: "new", tags: []string{"b"}},
		{desc: "SET with several actions and a function", expr: "SET title = :t, #c = #c + :one, tags2 = list_append(if_not_exists(tags2, :empty), :l)",
			names:  map[string]string{"#c": "count"},
			values: map[string]types.AttributeValue{":t": s("new"), ":one": n("1"), ":empty": &types.AttributeValueMemberL{}, ":l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("z")}}},
			old:    "x", count: "2", title: "new", tags: []string{"a", "b"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			id := t.Name()
			if _, err := dynamo.PutItem(t.Context(), tb, 1, &dynamodb.PutItemInput{Item: withKey(id, map[string]types.AttributeValue{
				"old": s("x"), "count": n("1"), "tags": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
			})}); err != nil {
				t.Fatalf("PutItem: %v", err)
			}
			in := &dynamodb.UpdateItemInput{
				Key:                       key(id),
				ExpressionAttributeNames:  tc.names,
				ExpressionAttributeValues: tc.values,
				ReturnValues:              types.ReturnValueAllNew,
			}
			if tc.expr != "" {
				in.UpdateExpression = aws.String(tc.expr)
			}
			out, err := dynamo.UpdateItem(t.Context(), tb, 7, in)
			if err != nil {
				t.Fatalf("UpdateItem(%q): %v", tc.expr, err)
			}
			if got := attr(out.Attributes, dynamo.DefaultFenceAttribute); got != "7" {
				t.Errorf("ALL_NEW fence = %s, want 7", got)
			}
			if _, ok := out.Attributes[dynamo.DefaultWriteIDAttribute]; ok {
				t.Errorf("ALL_NEW carries the write id: %v", out.Attributes)
			}
			item := raw(t, c, tb, key(id))
			for name, want := range map[string]string{"old": tc.old, "count": tc.count, "title": tc.title, dynamo.DefaultFenceAttribute: "7"} {
				if got := attr(item, name); got != want {
					t.Errorf("after %q: %s = %s, want %s", tc.expr, name, got, want)
				}
			}
			tags, _ := item["tags"].(*types.AttributeValueMemberSS)
			if tags == nil || !slices.Equal(slices.Sorted(slices.Values(tags.Value)), tc.tags) {
				t.Errorf("after %q: tags = %v, want %v", tc.expr, item["tags"], tc.tags)
			}
			// A lower token is refused and changes nothing.
			_, err = dynamo.UpdateItem(t.Context(), tb, 6, in)
			wantKind(t, "UpdateItem with token 6", err, "stale", 7)
			if after := raw(t, c, tb, key(id)); attr(after, "count") != tc.count || attr(after, dynamo.DefaultFenceAttribute) != "7" {
				t.Errorf("a stale UpdateItem changed the item: %v", after)
			}
		})
	}
}

// TestUpdateItemCondition tells a stale token from the caller's condition
// failing, as PutItem does.
func TestUpdateItemCondition(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	for _, tc := range []struct {
		desc  string
		token fence.Token
		limit string // the condition is count < limit; count is 3
		kind  string
	}{
		{"condition holds", 9, "10", "ok"},
		{"condition fails", 9, "3", "cond"},
		{"stale, condition holds", 8, "10", "stale"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			id := t.Name()
			if _, err := dynamo.PutItem(t.Context(), tb, 9, &dynamodb.PutItemInput{Item: withKey(id, map[string]types.AttributeValue{"count": n("3")})}); err != nil {
				t.Fatalf("PutItem: %v", err)
			}
			_, err := dynamo.UpdateItem(t.Context(), tb, tc.token, &dynamodb.UpdateItemInput{
				Key:                       key(id),
				UpdateExpression:          aws.String("ADD #c :one"),
				ConditionExpression:       aws.String("#c < :limit"),
				ExpressionAttributeNames:  map[string]string{"#c": "count"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1"), ":limit": n(tc.limit)},
			})
			wantKind(t, "UpdateItem", err, tc.kind, 9)
			want := "3"
			if tc.kind == "ok" {
				want = "4"
			}
			if got := attr(raw(t, c, tb, key(id)), "count"); got != want {
				t.Errorf("count = %s, want %s", got, want)
			}
		})
	}
}

// TestUpdateItemCreates: an update of an absent item creates it with the
// fence, as DynamoDB's UpdateItem does.
func TestUpdateItemCreates(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	if _, err := dynamo.UpdateItem(t.Context(), tb, 4, &dynamodb.UpdateItemInput{
		Key: key("new"), UpdateExpression: aws.String("SET v = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("created")},
	}); err != nil {
		t.Fatalf("UpdateItem: %v", err)
	}
	item := raw(t, c, tb, key("new"))
	if attr(item, "v") != "created" || attr(item, dynamo.DefaultFenceAttribute) != "4" {
		t.Errorf("item = %v, want v=created and fence 4", item)
	}
	h, err := dynamo.HighestItem(t.Context(), tb, key("new"))
	if err != nil || h != 4 {
		t.Errorf("Highest = %d, %v; want 4", h, err)
	}
}

// TestUpdateItemCannotTouchTheFence: an UpdateExpression that writes the
// fence attribute itself is refused by DynamoDB (the paths overlap with
// the fence's own assignment) and changes nothing.
func TestUpdateItemCannotTouchTheFence(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	tb := itemTable(t, c)
	if _, err := dynamo.PutItem(t.Context(), tb, 3, &dynamodb.PutItemInput{Item: key("touch")}); err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{"SET " + dynamo.DefaultFenceAttribute + " = :big", "REMOVE " + dynamo.DefaultFenceAttribute, "SET #f = :big", "ADD #f :big"} {
		in := &dynamodb.UpdateItemInput{Key: key("touch"), UpdateExpression: aws.String(expr)}
		if strings.Contains(expr, ":big") {
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":big": n("1000")}
		}
		if strings.Contains(expr, "#f") {
			in.ExpressionAttributeNames = map[string]string{"#f": dynamo.DefaultFenceAttribute}
		}
		if _, err := dynamo.UpdateItem(t.Context(), tb, 3, in); err == nil {
			t.Errorf("UpdateItem(%q) succeeded", expr)
		}
		if h, err := dynamo.HighestItem(t.Context(), tb, key("touch")); err != nil || h != 3 {
			t.Errorf("after UpdateItem(%q): Highest = %d, %v; want 3", expr, h, err)
		}
	}
}
