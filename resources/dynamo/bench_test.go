package dynamo_test

import (
	"crypto/rand"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// counting is an http.RoundTripper that counts the requests it forwards.
type counting struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(req)
}

// BenchmarkWrite compares each fenced write with the same unfenced write
// of the SDK on dynalite, side by side, and reports the HTTP requests per
// write. Run it with
//
//	go test ./resources/dynamo -run '^$' -bench Write -benchtime 2000x -count 3
func BenchmarkWrite(b *testing.B) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(tr.CloseIdleConnections)
	cnt := &counting{next: tr}
	c := emulators.DynamoClient(b, cnt)
	tb := itemTable(b, c)
	table := aws.String(dynamo.TableOf(tb))
	item := func(id string) map[string]types.AttributeValue {
		return withKey(id, map[string]types.AttributeValue{"v": s("a value of some thirty bytes..")})
	}
	update := func(id string) *dynamodb.UpdateItemInput {
		return &dynamodb.UpdateItemInput{
			TableName: table, Key: key(id), UpdateExpression: aws.String("SET v = :v ADD #n :one"),
			ExpressionAttributeNames:  map[string]string{"#n": "n"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("a value of some thirty bytes.."), ":one": n("1")},
		}
	}
	// Each run writes an item of its own (-count runs each case again,
	// and tokens restart at 1).
	run := func(name string, write func(tok fence.Token, id string) error) {
		b.Run(name, func(b *testing.B) {
			id := name + "-" + rand.Text()
			cnt.n.Store(0)
			tok := fence.Token(0)
			for b.Loop() {
				tok++
				if err := write(tok, id); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "requests/op")
		})
	}
	run("PutItem/unfenced", func(_ fence.Token, id string) error {
		_, err := c.PutItem(b.Context(), &dynamodb.PutItemInput{TableName: table, Item: item(id)})
		return err
	})
	// The fence's condition sent by hand, without the package: what the
	// server's condition costs apart from the package's own work.
	run("PutItem/hand-written-condition", func(tok fence.Token, id string) error {
		it := item(id)
		it[dynamo.DefaultFenceAttribute] = n(tok.String())
		_, err := c.PutItem(b.Context(), &dynamodb.PutItemInput{
			TableName: table, Item: it,
			ConditionExpression:       aws.String("attribute_not_exists(#f) OR #f BETWEEN :one AND :t"),
			ExpressionAttributeNames:  map[string]string{"#f": dynamo.DefaultFenceAttribute},
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1"), ":t": n(tok.String())},
		})
		return err
	})
	run("PutItem/fenced", func(tok fence.Token, id string) error {
		_, err := dynamo.PutItem(b.Context(), tb, tok, &dynamodb.PutItemInput{Item: item(id)})
		return err
	})
	run("UpdateItem/unfenced", func(_ fence.Token, id string) error {
		_, err := c.UpdateItem(b.Context(), update(id))
		return err
	})
	run("UpdateItem/fenced", func(tok fence.Token, id string) error {
		_, err := dynamo.UpdateItem(b.Context(), tb, tok, update(id))
		return err
	})
	// An unfenced delete removes the item once and then deletes nothing;
	// the fenced one writes its tombstone every time.
	run("DeleteItem/unfenced", func(_ fence.Token, id string) error {
		_, err := c.DeleteItem(b.Context(), &dynamodb.DeleteItemInput{TableName: table, Key: key(id)})
		return err
	})
	run("DeleteItem/fenced", func(tok fence.Token, id string) error {
		_, err := dynamo.DeleteItem(b.Context(), tb, tok, &dynamodb.DeleteItemInput{Key: key(id)})
		return err
	})
	// A stale write: refused, then read back to tell it from a failed
	// condition (dynalite returns no item with the failure).
	if _, err := dynamo.PutItem(b.Context(), tb, 1<<40, &dynamodb.PutItemInput{Item: item("stale")}); err != nil {
		b.Fatal(err)
	}
	run("PutItem/fenced-stale", func(tok fence.Token, _ string) error {
		_, err := dynamo.PutItem(b.Context(), tb, tok, &dynamodb.PutItemInput{Item: item("stale")})
		if err == nil {
			b.Fatal("a stale PutItem was accepted")
		}
		return nil
	})
}
