package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/dynamo"
)

// A ledger adjustment under a lease: the caller's own update and condition
// stay as they were; the token comes from the lease.
func ExampleUpdateItem() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	accounts, err := dynamo.New(dynamodb.NewFromConfig(cfg), "accounts", &dynamo.Options{KeyAttribute: "id"})
	if err != nil {
		log.Fatal(err)
	}
	var lease fence.Lease // from a Locker's Acquire
	_, err = dynamo.UpdateItem(ctx, accounts, lease.Token, &dynamodb.UpdateItemInput{
		Key:                 map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "acct-42"}},
		UpdateExpression:    aws.String("ADD balance :amount"),
		ConditionExpression: aws.String("balance >= :min"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":amount": &types.AttributeValueMemberN{Value: "-25"},
			":min":    &types.AttributeValueMemberN{Value: "25"},
		},
	})
	switch {
	case errors.Is(err, fence.ErrStaleToken):
		fmt.Println("lost the lease; another worker took over:", err)
	case errors.Is(err, dynamo.ErrConditionFailed):
		fmt.Println("insufficient balance")
	case err != nil:
		log.Fatal(err)
	}
}

// Deleting leaves a tombstone; GetItem reports the item as absent.
func ExampleDeleteItem() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := dynamo.New(dynamodb.NewFromConfig(cfg), "jobs", &dynamo.Options{KeyAttribute: "queue", SortKeyAttribute: "job"})
	if err != nil {
		log.Fatal(err)
	}
	key := map[string]types.AttributeValue{
		"queue": &types.AttributeValueMemberS{Value: "reports"},
		"job":   &types.AttributeValueMemberS{Value: "2024-06-01"},
	}
	if _, err := dynamo.DeleteItem(ctx, jobs, 7, &dynamodb.DeleteItemInput{Key: key}); err != nil {
		log.Fatal(err)
	}
	out, err := dynamo.GetItem(ctx, jobs, &dynamodb.GetItemInput{Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		log.Fatal(err)
	}
	highest, err := dynamo.HighestItem(ctx, jobs, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Item == nil, highest) // true 7
}

// The portable methods, on a table made by the resource's Create.
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	r, err := dynamo.New(dynamodb.NewFromConfig(cfg), "fenced-values", nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Create(ctx); err != nil {
		log.Fatal(err)
	}
	if err := r.Put(ctx, "report:acme:2024-06-01", 3, []byte("v1")); err != nil {
		log.Fatal(err)
	}
	err = r.Put(ctx, "report:acme:2024-06-01", 2, []byte("late"))
	fmt.Println(errors.Is(err, fence.ErrStaleToken)) // true
}
