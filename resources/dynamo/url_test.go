package dynamo_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// emulatorURL returns a dynamodb:// URL of a new table name on dynalite,
// with credentials and region from the environment (scripts/emulators.sh
// exports them), and deletes the table when the test ends.
func emulatorURL(t *testing.T, params string) (string, string) {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" || (os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "") {
		if testenv.Strict() {
			t.Fatal("AWS_ACCESS_KEY_ID and AWS_REGION are not set (source the emulators' environment)")
		}
		t.Skip("AWS_ACCESS_KEY_ID and AWS_REGION are not set")
	}
	table := "fence-res-url-" + strings.ToLower(rand.Text()[:12])
	c := emulators.DynamoClient(t, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})
	return "dynamodb://" + table + "?endpoint=" + url.QueryEscape(endpoint) + params, table
}

// TestOpenResourceURL: the opener's Create creates the table (with the
// URL's key attribute), and fence.OpenResource on the same URL puts and
// gets through it, sending through OpenOptions.HTTPClient.
func TestOpenResourceURL(t *testing.T) {
	t.Parallel()
	raw, table := emulatorURL(t, "&key-attribute=id")
	opened, err := fence.OpenResource(t.Context(), raw, nil)
	if err != nil {
		t.Fatalf("OpenResource: %v", err)
	}
	defer opened.Close()
	if err := opened.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	desc, err := emulators.DynamoClient(t, nil).DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatalf("DescribeTable after Create: %v", err)
	}
	if ks := desc.Table.KeySchema; len(ks) != 1 || aws.ToString(ks[0].AttributeName) != "id" {
		t.Errorf("key schema %+v; want the URL's key attribute id alone", ks)
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	cnt := &counting{next: tr}
	r, err := fence.OpenResource(t.Context(), raw, &fence.OpenOptions{HTTPClient: &http.Client{Transport: cnt}})
	if err != nil {
		t.Fatalf("OpenResource with an HTTP client: %v", err)
	}
	defer r.Close()
	if err := r.Put(t.Context(), "k", 3, []byte("v")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if v, tok, err := r.Get(t.Context(), "k"); err != nil || string(v) != "v" || tok != 3 {
		t.Fatalf("Get = %q, %d, %v; want v, 3", v, tok, err)
	}
	if err := r.Put(t.Context(), "k", 2, nil); !errors.Is(err, fence.ErrStaleToken) {
		t.Errorf("stale Put = %v; want ErrStaleToken", err)
	}
	if cnt.n.Load() < 3 {
		t.Errorf("%d requests went through OpenOptions.HTTPClient; want every one (3)", cnt.n.Load())
	}
}

// TestOpenResourceURLRefuses: bad URLs fail before any request.
func TestOpenResourceURLRefuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"dynamodb://values?nope=1", "dynamodb://x", "dynamodb://u:s3cret@values"} {
		_, err := fence.OpenResource(t.Context(), raw, nil)
		if !errors.Is(err, fence.ErrInvalid) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("OpenResource(%q) = %v; want ErrInvalid without the password", raw, err)
		}
	}
	_, forms := driver.ResourceSchemes()
	if !slices.ContainsFunc(forms, func(f string) bool { return strings.HasPrefix(f, "dynamodb://TABLE") }) {
		t.Errorf("the registered URL forms %q have none of dynamodb://TABLE", forms)
	}
}
