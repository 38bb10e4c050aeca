package dynamo_test

import (
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestResource runs the conformance suite on dynalite, on one table with
// the default layout (string partition key "key").
func TestResource(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	table := createTable(t, c, nil)
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) fence.Resource {
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
		LostAnswer: func(t *testing.T, after func()) fence.Resource {
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
