package dynamotable_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence/internal/dynamotable"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// input describes a table of a unique name with one string partition key.
func input(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
	}
}

// TestCreate checks that Create makes an ACTIVE on-demand table, that a
// second Create of the same table only waits for it, and that a request
// the store refuses comes back wrapped with the table's name.
func TestCreate(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	name := "fence-dynamotable-" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Errorf("delete table %q: %v", name, err)
		}
	})
	for _, what := range []string{"new table", "existing table"} {
		desc, err := dynamotable.Create(t.Context(), c, input(name), time.Minute, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("%s: Create: %v", what, err)
		}
		if desc == nil || desc.TableStatus != types.TableStatusActive {
			t.Fatalf("%s: description %+v, want an ACTIVE table", what, desc)
		}
		if desc.BillingModeSummary == nil || desc.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s: billing %+v, want PAY_PER_REQUEST", what, desc.BillingModeSummary)
		}
	}

	bad := input("fence-dynamotable-bad-" + strings.ToLower(rand.Text()[:12]))
	bad.AttributeDefinitions = nil // the key attribute is not defined
	_, err := dynamotable.Create(t.Context(), c, bad, time.Minute, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "CreateTable "+`"`+aws.ToString(bad.TableName)+`"`) {
		t.Fatalf("Create with an undefined key attribute: %v; want an error naming the table", err)
	}
}
