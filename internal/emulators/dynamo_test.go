package emulators_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence/internal/emulators"
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
		c := emulators.DynamoClient(t, refusingTransport{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		if got := c.Options().RetryMaxAttempts; got != 1 {
			t.Errorf("RetryMaxAttempts = %d, want 1 from optFns", got)
		}
		if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); !errors.Is(err, errRefused) {
			t.Fatalf("ListTables through the given transport: %v; want the transport's error", err)
		}
	})
}
