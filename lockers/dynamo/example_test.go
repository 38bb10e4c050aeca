package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/dynamo"
)

// The lease table is created once; each job then takes the key, does its
// work with the lease's token (pass it to a fenced resource), and releases.
// It needs DynamoDB, so it only compiles here.
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	client := dynamodb.NewFromConfig(cfg)
	if err := dynamo.CreateTable(ctx, client, "fence-locks", nil); err != nil {
		log.Fatal(err)
	}

	// One Locker for the whole process: what it saw counts for all its
	// sessions.
	locker, err := dynamo.New(client, "fence-locks", nil)
	if err != nil {
		log.Fatal(err)
	}

	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	if held, ok := errors.AsType[*fence.HeldError](err); ok {
		// Clock-free: this Locker now times the holder's record; an
		// Acquire after the holder's lease has passed unchanged takes
		// the key over.
		fmt.Printf("busy: %s holds token %d, at most until %v\n", held.Owner, held.Token, held.ValidUntil)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}

// With synchronised clocks (NTP with a known bound), a trusted-clock
// Locker takes over an expired lease without watching it first.
func ExampleNew_trustedClock() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	locker, err := dynamo.New(dynamodb.NewFromConfig(cfg), "fence-locks", &dynamo.Options{
		TrustedClock: true,
		MaxClockSkew: 500 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = locker
}

// As gives the client under a Locker, here one opened from a URL, for
// what this package does not do: reading a key's item as the package doc
// describes it. It needs DynamoDB, so it only compiles here.
func Example_as() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "dynamodb://fence-locks?region=eu-west-1", nil)
	if err != nil {
		log.Fatal(err)
	}
	var client *dynamodb.Client
	if !locker.As(&client) {
		log.Fatal("not a DynamoDB locker")
	}
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String("fence-locks"),
		Key:            map[string]types.AttributeValue{dynamo.DefaultKeyAttribute: &types.AttributeValueMemberS{Value: "nightly-report"}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Item["token"])
}

// Bad settings are refused by New, before any call to DynamoDB.
func ExampleNew_invalid() {
	_, err := dynamo.New(&dynamodb.Client{}, "fence-locks", &dynamo.Options{MaxClockSkew: time.Second})
	fmt.Println(errors.Is(err, fence.ErrInvalid))
	fmt.Println(err)
	// Output:
	// true
	// fence: invalid MaxClockSkew: set without TrustedClock; clock-free expiry ignores wall clocks
}
