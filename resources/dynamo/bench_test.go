package dynamo_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
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
	c := client(b, cnt)
	tb := itemTable(b, c)
	table := aws.String(tb.Options().Table)
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
	run := func(name string, write func(tok fence.Token) error) {
		b.Run(name, func(b *testing.B) {
			cnt.n.Store(0)
			tok := fence.Token(0)
			for b.Loop() {
				tok++
				if err := write(tok); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "requests/op")
		})
	}
	run("PutItem/unfenced", func(fence.Token) error {
		_, err := c.PutItem(b.Context(), &dynamodb.PutItemInput{TableName: table, Item: item("put-unfenced")})
		return err
	})
	run("PutItem/fenced", func(tok fence.Token) error {
		_, err := tb.PutItem(b.Context(), tok, &dynamodb.PutItemInput{Item: item("put-fenced")})
		return err
	})
	run("UpdateItem/unfenced", func(fence.Token) error {
		_, err := c.UpdateItem(b.Context(), update("update-unfenced"))
		return err
	})
	run("UpdateItem/fenced", func(tok fence.Token) error {
		_, err := tb.UpdateItem(b.Context(), tok, update("update-fenced"))
		return err
	})
	run("DeleteItem/unfenced", func(fence.Token) error {
		_, err := c.DeleteItem(b.Context(), &dynamodb.DeleteItemInput{TableName: table, Key: key("delete-unfenced")})
		return err
	})
	run("DeleteItem/fenced", func(tok fence.Token) error {
		_, err := tb.DeleteItem(b.Context(), tok, &dynamodb.DeleteItemInput{Key: key("delete-fenced")})
		return err
	})
	// A stale write: refused, then read back to tell it from a failed
	// condition (dynalite returns no item with the failure).
	if _, err := tb.PutItem(b.Context(), 1<<40, &dynamodb.PutItemInput{Item: item("stale")}); err != nil {
		b.Fatal(err)
	}
	run("PutItem/fenced-stale", func(tok fence.Token) error {
		_, err := tb.PutItem(b.Context(), tok, &dynamodb.PutItemInput{Item: item("stale")})
		if err == nil {
			b.Fatal("a stale PutItem was accepted")
		}
		return nil
	})
}
