package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/dynamotable"
)

// defaultTableWait is how long CreateTable waits for the table to become
// ACTIVE when TableOptions.Wait is 0.
const defaultTableWait = 5 * time.Minute

// TableOptions configure CreateTable. A nil *TableOptions means all
// defaults.
type TableOptions struct {
	// KeyAttribute names the partition key attribute; use the same value
	// as Options.KeyAttribute. Default: DefaultKeyAttribute.
	KeyAttribute string
	// Wait bounds the wait for the table to become ACTIVE (ctx bounds it
	// too). Default: 5 minutes.
	Wait time.Duration
}

// keySchema returns the key schema and attribute definitions of a lease
// table whose partition key is keyAttribute: one HASH key of type S and
// no sort key (see the package doc, "The stored item").
func keySchema(keyAttribute string) ([]types.KeySchemaElement, []types.AttributeDefinition) {
	return []types.KeySchemaElement{{AttributeName: aws.String(keyAttribute), KeyType: types.KeyTypeHash}},
		[]types.AttributeDefinition{{AttributeName: aws.String(keyAttribute), AttributeType: types.ScalarAttributeTypeS}}
}

// CreateTable creates the lease table with on-demand billing
// (PAY_PER_REQUEST) and the key schema a Locker needs (one partition key
// of type S named TableOptions.KeyAttribute, no sort key), and waits
// until it is ACTIVE. If the table exists already it only waits, and checks that its
// key schema is the one a Locker needs (an error matching fence.ErrInvalid
// otherwise). Run it once at start-up or in a deployment step. Its errors
// are *fence.OpError values of operation "create".
func CreateTable(ctx context.Context, api TableAPI, table string, opts *TableOptions) error {
	if err := createTable(ctx, api, table, opts); err != nil {
		return &fence.OpError{Backend: "dynamo", Op: "create", Err: err}
	}
	return nil
}

// Create implements driver.Creator, for the Locker's Create: CreateTable
// of the Locker's table and key attribute, through the client given to
// New, which must then be a TableAPI too (a *dynamodb.Client is);
// otherwise it returns an error matching errors.ErrUnsupported.
func (d *store) Create(ctx context.Context) error {
	api, ok := d.api.(TableAPI)
	if !ok {
		return fmt.Errorf("the client given to New (%T) cannot create tables; use CreateTable: %w", d.api, errors.ErrUnsupported)
	}
	return createTable(ctx, api, d.table, &TableOptions{KeyAttribute: d.keyAttr})
}

// createTable is CreateTable, with its errors unwrapped.
func createTable(ctx context.Context, api TableAPI, table string, opts *TableOptions) error {
	if api == nil {
		return &fence.InvalidError{Field: "api", Reason: "nil"}
	}
	if err := checkTable(table); err != nil {
		return err
	}
	var o TableOptions
	if opts != nil {
		o = *opts
	}
	if o.KeyAttribute == "" {
		o.KeyAttribute = DefaultKeyAttribute
	}
	if err := checkKeyAttribute(o.KeyAttribute); err != nil {
		return err
	}
	if o.Wait < 0 {
		return &fence.InvalidError{Field: "Wait", Reason: fmt.Sprintf("%v is negative", o.Wait)}
	}
	if o.Wait == 0 {
		o.Wait = defaultTableWait
	}
	schema, attrs := keySchema(o.KeyAttribute)
	desc, err := dynamotable.Create(ctx, api, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		KeySchema:            schema,
		AttributeDefinitions: attrs,
	}, o.Wait, 500*time.Millisecond)
	if err != nil {
		return err
	}
	return checkSchema(table, o.KeyAttribute, desc)
}

// checkSchema checks that desc has a single string partition key named
// keyAttr.
func checkSchema(table, keyAttr string, desc *types.TableDescription) error {
	bad := func(reason string) error {
		return &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q exists and %s; a lease table has only a partition key %q of type S", table, reason, keyAttr)}
	}
	if desc == nil {
		return bad("has no description")
	}
	if len(desc.KeySchema) != 1 {
		return bad(fmt.Sprintf("has %d key attributes", len(desc.KeySchema)))
	}
	k := desc.KeySchema[0]
	if aws.ToString(k.AttributeName) != keyAttr || k.KeyType != types.KeyTypeHash {
		return bad(fmt.Sprintf("its key is %q (%s)", aws.ToString(k.AttributeName), k.KeyType))
	}
	for _, a := range desc.AttributeDefinitions {
		if aws.ToString(a.AttributeName) == keyAttr && a.AttributeType != types.ScalarAttributeTypeS {
			return bad(fmt.Sprintf("its key is of type %s", a.AttributeType))
		}
	}
	return nil
}
