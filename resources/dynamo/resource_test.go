package dynamo_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
	memres "github.com/fencekit/fence/resources/memory"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestResource runs the conformance suite on dynalite, on one table with
// the default layout (string partition key "key").
func TestResource(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	table := createTable(t, c, nil)
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) *fence.Resource {
			r, err := dynamo.New(c, table, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return r
		},
		MaxKeyLen: dynamo.MaxKeyLen,
		// dynalite applies the first PutItem (Put and Delete both send
		// one); the transport drops its answer, and the SDK does not
		// retry, so the package reads back.
		LostAnswer: func(t *testing.T, after func()) *fence.Resource {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			t.Cleanup(tr.CloseIdleConnections)
			f := &faulty{next: tr, op: "PutItem", lost: 1, after: after}
			r, err := dynamo.New(emulators.DynamoClient(t, f, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), table, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return r
		},
	})
}

// TestAs: As gives the client New was given, as an API and, when it is
// one, as a *dynamodb.Client; nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	r, err := dynamo.New(c, "values", nil)
	if err != nil {
		t.Fatal(err)
	}
	var api dynamo.API
	if !r.As(&api) || api != dynamo.API(c) {
		t.Errorf("As(*dynamo.API) = %v; want the client New was given", api)
	}
	var got *dynamodb.Client
	if !r.As(&got) || got != c {
		t.Errorf("As(**dynamodb.Client) = %p; want %p", got, c)
	}
	var s string
	if r.As(&s) {
		t.Errorf("As(*string) = true; want false")
	}
	wrapped, err := dynamo.New(apiOnly{c}, "values", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got = nil; wrapped.As(&got) || got != nil {
		t.Errorf("As(**dynamodb.Client) on a client of another type = true, %p; want false", got)
	}
}

// apiOnly is a client that has the API's methods and no others.
type apiOnly struct{ dynamo.API }

// TestCreate: a resource's Create makes the table of its Options, and
// creating an existing table only waits for it; a client that cannot
// create tables gets errors.ErrUnsupported.
func TestCreate(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	table := "fence-res-" + strings.ToLower(rand.Text()[:12])
	r, err := dynamo.New(c, table, &dynamo.Options{KeyAttribute: "id"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})
	for i := range 2 {
		if err := r.Create(t.Context()); err != nil {
			t.Fatalf("Create #%d: %v", i+1, err)
		}
	}
	if err := r.Put(t.Context(), "k", 1, []byte("v")); err != nil {
		t.Fatalf("Put on the created table: %v", err)
	}
	desc, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if ks := desc.Table.KeySchema; len(ks) != 1 || aws.ToString(ks[0].AttributeName) != "id" {
		t.Errorf("key schema %+v; want the key attribute id alone", ks)
	}
	noTables, err := dynamo.New(apiOnly{c}, table, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := noTables.Create(t.Context()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Create through a client without CreateTable = %v; want errors.ErrUnsupported", err)
	}
}

// TestItemFunctionsRefuseOtherResources: the item functions take only a
// resource of New, and say so, before any request.
func TestItemFunctionsRefuseOtherResources(t *testing.T) {
	t.Parallel()
	k := map[string]types.AttributeValue{dynamo.DefaultKeyAttribute: s("k")}
	for _, r := range []*fence.Resource{memres.New(nil), nil} {
		for op, call := range map[string]func() error{
			"put item": func() error { _, err := dynamo.PutItem(t.Context(), r, 1, &dynamodb.PutItemInput{Item: k}); return err },
			"update item": func() error {
				_, err := dynamo.UpdateItem(t.Context(), r, 1, &dynamodb.UpdateItemInput{Key: k})
				return err
			},
			"delete item": func() error {
				_, err := dynamo.DeleteItem(t.Context(), r, 1, &dynamodb.DeleteItemInput{Key: k})
				return err
			},
			"get item":     func() error { _, err := dynamo.GetItem(t.Context(), r, &dynamodb.GetItemInput{Key: k}); return err },
			"highest item": func() error { _, err := dynamo.HighestItem(t.Context(), r, k); return err },
		} {
			err := call()
			ie, ok := errors.AsType[*fence.InvalidError](err)
			if !ok || ie.Field != "resource" {
				t.Errorf("%s on %v = %v; want a *fence.InvalidError for the resource", op, r, err)
			}
			if oe, ok := errors.AsType[*fence.OpError](err); !ok || oe.Backend != "dynamo" || oe.Op != op {
				t.Errorf("%s on %v = %v; want a *fence.OpError of dynamo, %q", op, r, err, op)
			}
		}
	}
}
