package emulators_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// errRefused is what refusingTransport answers to every request.
var errRefused = errors.New("refused by the test's transport")

// refusingTransport fails every request without sending it.
type refusingTransport struct{}

func (refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return nil, errRefused
}

// TestDynamoClient checks that the client reaches the emulator, through the
// given transport when there is one, and that optFns are applied.
func TestDynamoClient(t *testing.T) {
	t.Parallel()
	t.Run("own transport", func(t *testing.T) {
		t.Parallel()
		c := emulators.DynamoClient(t, nil)
		if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
			t.Fatalf("ListTables: %v", err)
		}
	})
	t.Run("given transport and options", func(t *testing.T) {
		t.Parallel()
		c := emulators.DynamoClient(t, refusingTransport{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		if got := c.Options().RetryMaxAttempts; got != 1 {
			t.Errorf("RetryMaxAttempts = %d, want 1 from optFns", got)
		}
		if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); !errors.Is(err, errRefused) {
			t.Fatalf("ListTables through the given transport: %v; want the transport's error", err)
		}
	})
}

// TestDynaliteSurvivesAnAbortedRequest sends half a request and hangs up,
// as a fault-injecting transport does, then checks that dynalite still
// answers: dynalite itself exits on such a request; scripts/dynalite.js
// keeps it serving.
func TestDynaliteSurvivesAnAbortedRequest(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t)
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: "+u.Host+"\r\nContent-Length: 100\r\n\r\n0123456789"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	time.Sleep(200 * time.Millisecond)
	resp, err := http.Get(endpoint)
	if err != nil {
		t.Fatalf("dynalite no longer answers after an aborted request: %v", err)
	}
	resp.Body.Close()
}

// TestDynamoTransactions checks what lockers/dynamo's LockAll in one
// transaction relies on, on an emulator that has transactions (DynamoDB
// Local): a TransactWriteItems whose condition fails writes none of its
// items and says which failed, with the item when asked
// (ReturnValuesOnConditionCheckFailure). On dynalite it skips, naming the
// gap; DynamoTransactions fails instead where the server should have them.
func TestDynamoTransactions(t *testing.T) {
	t.Parallel()
	if !emulators.DynamoTransactions(t) {
		t.Skip(emulators.NoDynamoTransactions)
	}
	c := emulators.DynamoClient(t, nil)
	table := emulators.UniqueName("fence-tx-")
	_, err := c.CreateTable(t.Context(), &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
			t.Errorf("delete table %q: %v", table, err)
		}
	})
	if err := dynamodb.NewTableExistsWaiter(c).Wait(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)}, time.Minute); err != nil {
		t.Fatalf("table %q: %v", table, err)
	}
	item := func(k, v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: k}, "v": &types.AttributeValueMemberS{Value: v}}
	}
	if _, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("b", "held")}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	put := func(k string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(table), Item: item(k, "mine"),
			ConditionExpression:                 aws.String("attribute_not_exists(k)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}}
	}
	_, err = c.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("a"), put("b")}})
	canceled, ok := errors.AsType[*types.TransactionCanceledException](err)
	if !ok {
		t.Fatalf("TransactWriteItems with a failing condition = %v; want a TransactionCanceledException", err)
	}
	var codes []string
	for _, r := range canceled.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if len(codes) != 2 || codes[0] != "None" || codes[1] != "ConditionalCheckFailed" {
		t.Fatalf("CancellationReasons codes = %v; want [None ConditionalCheckFailed]", codes)
	}
	if v, _ := canceled.CancellationReasons[1].Item["v"].(*types.AttributeValueMemberS); v == nil || v.Value != "held" {
		t.Errorf("the failed item's reason carries %v; want the stored item (v=held)", canceled.CancellationReasons[1].Item)
	}
	out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "a"}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if out.Item != nil {
		t.Errorf("the cancelled transaction wrote item a: %v", out.Item)
	}
}
