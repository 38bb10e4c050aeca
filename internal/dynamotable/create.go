// Package dynamotable creates DynamoDB tables for the packages that keep
// their records in one: lockers/dynamo (lease tables) and resources/dynamo
// (fenced tables). Each of them checks its own options and builds the key
// schema; this package does what is the same for both.
package dynamotable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// API is the part of the DynamoDB client Create calls. *dynamodb.Client
// satisfies it, and so does each calling package's TableAPI.
type API interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// maxDelay is the longest pause between two DescribeTable calls while
// Create waits.
const maxDelay = 5 * time.Second

// Create creates the table that in describes, with on-demand billing
// (PAY_PER_REQUEST, whatever in.BillingMode says), and waits until it is
// ACTIVE: at most wait (ctx bounds it too), calling DescribeTable after
// minDelay first, then at growing intervals of up to 5 s. A table that
// exists already (ResourceInUseException) is only waited for. It returns
// the description of the ACTIVE table, so the caller can check a table
// that existed. Errors from the store are wrapped with %w and name the
// table; callers wrap them in a *fence.OpError.
func Create(ctx context.Context, api API, in *dynamodb.CreateTableInput, wait, minDelay time.Duration) (*types.TableDescription, error) {
	table := aws.ToString(in.TableName)
	in.BillingMode = types.BillingModePayPerRequest
	_, err := api.CreateTable(ctx, in)
	if _, exists := errors.AsType[*types.ResourceInUseException](err); err != nil && !exists {
		return nil, fmt.Errorf("CreateTable %q: %w", table, err)
	}
	w := dynamodb.NewTableExistsWaiter(api, func(w *dynamodb.TableExistsWaiterOptions) {
		w.MinDelay, w.MaxDelay = minDelay, maxDelay
	})
	out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, wait)
	if err != nil {
		return nil, fmt.Errorf("wait for table %q: %w", table, err)
	}
	return out.Table, nil
}
