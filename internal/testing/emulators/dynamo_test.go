package emulators_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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
