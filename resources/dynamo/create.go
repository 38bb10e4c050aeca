package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/dynamotable"
)

// defaultTableWait is how long createTable waits for the table to become
// ACTIVE when tableOptions.Wait is 0.
const defaultTableWait = 5 * time.Minute

// tableOptions describe the table createTable makes. A nil *tableOptions
// means all defaults: the table of a resource with nil Options.
type tableOptions struct {
	// KeyAttribute names the partition key attribute; use the same value
	// as Options.KeyAttribute. Default: DefaultKeyAttribute.
	KeyAttribute string
	// KeyType is its type. Default: types.ScalarAttributeTypeS, which the
	// portable methods need.
	KeyType types.ScalarAttributeType
	// SortKeyAttribute names the sort key attribute; empty for none.
	SortKeyAttribute string
	// SortKeyType is its type. Default: types.ScalarAttributeTypeS.
	SortKeyType types.ScalarAttributeType
	// Wait bounds the wait for the table to become ACTIVE (ctx bounds it
	// too). Default: defaultTableWait.
	Wait time.Duration
}

// createTable creates table with on-demand billing (PAY_PER_REQUEST) and
// the key schema of opts (nil for the table of the portable methods), and
// waits until it is ACTIVE. A table that exists already is only waited
// for.
func createTable(ctx context.Context, api tableAPI, table string, opts *tableOptions) error {
	if api == nil {
		return &fence.InvalidError{Field: "api", Reason: "nil"}
	}
	if err := checkTableName(table); err != nil {
		return err
	}
	var o tableOptions
	if opts != nil {
		o = *opts
	}
	if o.KeyAttribute == "" {
		o.KeyAttribute = DefaultKeyAttribute
	}
	if o.Wait < 0 {
		return &fence.InvalidError{Field: "Wait", Reason: fmt.Sprintf("%v is negative", o.Wait)}
	}
	if o.Wait == 0 {
		o.Wait = defaultTableWait
	}
	in := &dynamodb.CreateTableInput{TableName: aws.String(table)}
	add := func(field, typeField, name string, typ types.ScalarAttributeType, kt types.KeyType) error {
		if err := driver.ValidateKey(field, name, maxAttributeNameLen); err != nil {
			return err
		}
		switch typ {
		case "":
			typ = types.ScalarAttributeTypeS
		case types.ScalarAttributeTypeS, types.ScalarAttributeTypeN, types.ScalarAttributeTypeB:
		default:
			return &fence.InvalidError{Field: typeField, Reason: fmt.Sprintf("%q is not S, N or B", typ)}
		}
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(name), KeyType: kt})
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ})
		return nil
	}
	if err := add("KeyAttribute", "KeyType", o.KeyAttribute, o.KeyType, types.KeyTypeHash); err != nil {
		return err
	}
	if o.SortKeyAttribute != "" {
		if o.SortKeyAttribute == o.KeyAttribute {
			return &fence.InvalidError{Field: "SortKeyAttribute", Reason: fmt.Sprintf("%q is also the key attribute", o.SortKeyAttribute)}
		}
		if err := add("SortKeyAttribute", "SortKeyType", o.SortKeyAttribute, o.SortKeyType, types.KeyTypeRange); err != nil {
			return err
		}
	}
	_, err := dynamotable.Create(ctx, api, in, o.Wait, 200*time.Millisecond)
	return err
}
