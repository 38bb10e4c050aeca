package emulators_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence/internal/emulators"
)

// countingTransport counts the requests it forwards.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestDynamoClient checks that the client reaches dynalite, through the
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
		rt := &countingTransport{next: http.DefaultTransport}
		c := emulators.DynamoClient(t, rt, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		if got := c.Options().RetryMaxAttempts; got != 1 {
			t.Errorf("RetryMaxAttempts = %d, want 1 from optFns", got)
		}
		if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
			t.Fatalf("ListTables: %v", err)
		}
		if n := rt.n.Load(); n != 1 {
			t.Errorf("%d requests went through the given transport, want 1", n)
		}
	})
}
