// Package emulators builds SDK clients of the storage emulators that
// scripts/emulators.sh starts, for tests. It finds them through
// internal/testenv, so a test using it fails under scripts/test.sh and is
// skipped otherwise when the emulator is not running.
package emulators

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// The test credentials of the DynamoDB emulators. dynalite checks none;
// DynamoDB Local answers UnrecognizedClientException to an access key id
// that is not letters and digits only. scripts/emulators.sh hands the same
// pair to the AWS SDK's environment.
const (
	dynamoAccessKey = "fencetest"
	dynamoSecretKey = "fence-test-secret"
)

// DynamoClient returns a DynamoDB client of the emulator at
// testenv.DynamoEndpoint (dynalite, or DynamoDB Local in scripts/test.sh's
// second run) whose requests go through rt; when rt is nil, through an
// http.Transport of its own whose idle connections are closed when the
// test ends. The client has region us-east-1 and fixed test credentials,
// and reads nothing from the environment or profile files. optFns adjust
// its options last.
func DynamoClient(t testing.TB, rt http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	if rt == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt = tr
	}
	opts := dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: dynamoAccessKey, SecretAccessKey: dynamoSecretKey, Source: "test"}, nil
		}),
		HTTPClient: &http.Client{Transport: rt},
	}
	for _, f := range optFns {
		f(&opts)
	}
	return dynamodb.New(opts)
}

// The DynamoDB emulators, as DynamoServer names them.
const (
	// Dynalite is dynalite, the emulator of the main test run. It has no
	// transactions.
	Dynalite = "dynalite"
	// DynamoDBLocal is AWS's DynamoDB Local, on which scripts/test.sh runs
	// the DynamoDB packages a second time. It has transactions.
	DynamoDBLocal = "dynamodb-local"
)

// DynamoServer returns the name (Dynalite or DynamoDBLocal) and version
// of the emulator at testenv.DynamoEndpoint, from FENCE_DYNAMO_SERVER
// ("name version"), which scripts/emulators.sh exports and scripts/test.sh
// sets for its second run. Both are "" when the variable is unset, as for
// an endpoint named by hand.
func DynamoServer() (name, version string) {
	name, version, _ = strings.Cut(os.Getenv("FENCE_DYNAMO_SERVER"), " ")
	return name, version
}

// NoDynamoTransactions names the gap of dynalite that DynamoTransactions
// reports: the message of a test that skips on it.
const NoDynamoTransactions = "emulator gap: dynalite answers TransactWriteItems and TransactGetItems with UnknownOperationException (DynamoDB Local and DynamoDB have them); scripts/test.sh runs this test on DynamoDB Local"

var (
	txOnce sync.Once
	txHas  bool
	txErr  error
)

// DynamoTransactions reports whether the emulator at
// testenv.DynamoEndpoint knows TransactWriteItems, asking it once per test
// binary with a transaction on a table that does not exist. dynalite does
// not: a test of a transaction skips there with NoDynamoTransactions.
// The answer must match the server DynamoServer names, so that such a
// test never skips unseen where it should run: on DynamoDB Local an
// endpoint without transactions fails t, and so does dynalite with them
// (the gap is gone: the tests that skip on it should run).
func DynamoTransactions(t testing.TB) bool {
	t.Helper()
	client := DynamoClient(t, nil)
	txOnce.Do(func() {
		_, err := client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
			ConditionCheck: &types.ConditionCheck{
				TableName:                aws.String(UniqueName("fence-no-table-")),
				Key:                      map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: "k"}},
				ConditionExpression:      aws.String("attribute_exists(#k)"),
				ExpressionAttributeNames: map[string]string{"#k": "key"},
			},
		}}})
		apiErr, isAPI := errors.AsType[smithy.APIError](err)
		switch {
		case isAPI && apiErr.ErrorCode() == "UnknownOperationException":
		case err == nil || isAPI: // ResourceNotFoundException: the table
			txHas = true
		default:
			txErr = err
		}
	})
	if txErr != nil {
		t.Fatalf("asking %s for TransactWriteItems: %v", testenv.DynamoEndpoint(t), txErr)
	}
	name, version := DynamoServer()
	switch {
	case name == DynamoDBLocal && !txHas:
		t.Fatalf("FENCE_DYNAMO_SERVER names DynamoDB Local %s, but %s has no TransactWriteItems", version, testenv.DynamoEndpoint(t))
	case name == Dynalite && txHas:
		t.Fatalf("dynalite %s at %s now has TransactWriteItems: the gap is gone, so the tests that skip with NoDynamoTransactions should run on it", version, testenv.DynamoEndpoint(t))
	}
	return txHas
}
