package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/dynamotable"
)

// DefaultTableWait is how long CreateTable waits for the table to become
// ACTIVE when TableOptions.Wait is 0.
const DefaultTableWait = 5 * time.Minute

// TableOptions describe the table CreateTable makes.
type TableOptions struct {
	// PartitionKey names the partition key attribute. Default:
	// DefaultPartitionKey, the portable Resource's default.
	PartitionKey string
	// PartitionKeyType is its type. Default: types.ScalarAttributeTypeS.
	PartitionKeyType types.ScalarAttributeType
	// SortKey names the sort key attribute; empty for none.
	SortKey string
	// SortKeyType is its type. Default: types.ScalarAttributeTypeS.
	SortKeyType types.ScalarAttributeType
	// Wait bounds the wait for the table to become ACTIVE (ctx bounds it
	// too). Default: DefaultTableWait.
	Wait time.Duration
}

// CreateTable creates table with on-demand billing (PAY_PER_REQUEST) and
// the key schema of opts (nil for a Resource's table), and waits until it
// is ACTIVE. A table that exists already is only waited for. For tests,
// and for users who do not create tables with other tools; nothing else
// in the package needs it.
func CreateTable(ctx context.Context, api TableAPI, table string, opts *TableOptions) error {
	if api == nil {
		return &fence.InvalidError{Field: "api", Reason: "nil"}
	}
	if !tableName.MatchString(table) {
		return &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q is not a DynamoDB table name (3 to 255 of a-z, A-Z, 0-9, '_', '-', '.')", table)}
	}
	var o TableOptions
	if opts != nil {
		o = *opts
	}
	if o.PartitionKey == "" {
		o.PartitionKey = DefaultPartitionKey
	}
	if o.Wait < 0 {
		return &fence.InvalidError{Field: "Wait", Reason: fmt.Sprintf("%v is negative", o.Wait)}
	}
	if o.Wait == 0 {
		o.Wait = DefaultTableWait
	}
	in := &dynamodb.CreateTableInput{TableName: aws.String(table)}
	add := func(field, name string, typ types.ScalarAttributeType, kt types.KeyType) error {
		if err := fence.ValidateKey(field, name, maxAttributeNameLen); err != nil {
			return err
		}
		switch typ {
		case "":
			typ = types.ScalarAttributeTypeS
		case types.ScalarAttributeTypeS, types.ScalarAttributeTypeN, types.ScalarAttributeTypeB:
		default:
			return &fence.InvalidError{Field: field + "Type", Reason: fmt.Sprintf("%q is not S, N or B", typ)}
		}
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(name), KeyType: kt})
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ})
		return nil
	}
	if err := add("PartitionKey", o.PartitionKey, o.PartitionKeyType, types.KeyTypeHash); err != nil {
		return err
	}
	if o.SortKey != "" {
		if o.SortKey == o.PartitionKey {
			return &fence.InvalidError{Field: "SortKey", Reason: fmt.Sprintf("%q is also the partition key", o.SortKey)}
		}
		if err := add("SortKey", o.SortKey, o.SortKeyType, types.KeyTypeRange); err != nil {
			return err
		}
	}
	_, err := dynamotable.Create(ctx, api, in, o.Wait, 200*time.Millisecond)
	return err
}
