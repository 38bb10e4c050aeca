package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
)

// uniqueName returns prefix followed by random hex, a table name no other
// test run uses.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// newTable creates a lease table of a unique name with CreateTable and
// deletes it when the test ends. It returns the table's name.
func newTable(t testing.TB, client *dynamodb.Client, opts *TableOptions) string {
	t.Helper()
	table := uniqueName("fence-test-")
	if err := CreateTable(t.Context(), client, table, opts); err != nil {
		t.Fatalf("CreateTable(%q): %v", table, err)
	}
	t.Cleanup(func() { deleteTable(t, client, table) })
	return table
}

// deleteTable deletes table after the test (t.Context is done by then, so
// it uses its own bounded context).
func deleteTable(t testing.TB, client *dynamodb.Client, table string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
		t.Errorf("delete table %q: %v", table, err)
	}
}

// testLocker is a Locker with the store under it, for the tests that
// look at what the store remembers or call it directly.
type testLocker struct {
	*fence.Locker
	d *store
}

// newLocker returns a Locker on table, as New makes it, failing the test
// on an error.
func newLocker(t testing.TB, api DynamoDBAPI, table string, opts *Options) *testLocker {
	t.Helper()
	return newSeenLocker(t, api, table, opts, nil)
}

// newSeenLocker is newLocker with a store that remembers what it sees in
// obs, which Lockers of one process share (nil: observations of its own).
func newSeenLocker(t testing.TB, api DynamoDBAPI, table string, opts *Options, obs *clockfree.Observations) *testLocker {
	t.Helper()
	d, err := newStore(api, table, opts, obs)
	if err != nil {
		t.Fatalf("New(%q): %v", table, err)
	}
	l, err := driver.NewLocker(d.driver(), &driver.LockerOptions{Clock: d.clock})
	if err != nil {
		t.Fatalf("New(%q): %v", table, err)
	}
	return &testLocker{Locker: l, d: d}
}

// storeOf returns the store under l, a Locker opened from a URL.
func storeOf(t testing.TB, l *fence.Locker) *store {
	t.Helper()
	d, ok := driver.LockerOf(l).(*store)
	if tx, isTx := driver.LockerOf(l).(*txStore); isTx {
		d, ok = tx.store, true
	}
	if !ok {
		t.Fatalf("the Locker's driver is a %T, not a *store", driver.LockerOf(l))
	}
	return d
}

// putItem writes item to table as is, bypassing the Locker: a record
// edited by hand.
func putItem(t testing.TB, client *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
}

// getItem reads key's item from table as is, with a consistent read.
func getItem(t testing.TB, client *dynamodb.Client, table, key string) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            map[string]types.AttributeValue{DefaultKeyAttribute: &types.AttributeValueMemberS{Value: key}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem(%q): %v", key, err)
	}
	return out.Item
}

// operation returns the DynamoDB operation a request calls, from its
// X-Amz-Target header ("DynamoDB_20120810.UpdateItem" → "UpdateItem").
func operation(r *http.Request) string {
	target := r.Header.Get("X-Amz-Target")
	return target[strings.LastIndexByte(target, '.')+1:]
}

// counter is an http.RoundTripper that counts the requests it forwards,
// by operation. Each is one round trip to the store.
type counter struct {
	next  http.RoundTripper
	total atomic.Int64
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.total.Add(1)
	return c.next.RoundTrip(r)
}

// versionOf returns the version attribute of a lease item.
func versionOf(t testing.TB, item map[string]types.AttributeValue) string {
	t.Helper()
	v, ok := item[attrVersion].(*types.AttributeValueMemberS)
	if !ok {
		t.Fatalf("item has no string version: %v", item)
	}
	return v.Value
}
