package s3_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	fences3 "github.com/fencekit/fence/lockers/s3"
)

// The bucket is created once; each job then takes the key, does its work
// with the lease's token (pass it to a fenced resource, such as
// resources/s3 in the same bucket) and releases. It needs S3, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// One Locker for the whole process: what it saw counts for all its
	// sessions.
	locker, err := fences3.New(s3.NewFromConfig(cfg), "my-app-locks", &fences3.Options{Prefix: "locks/"})
	if err != nil {
		log.Fatal(err)
	}
	if err := locker.Create(ctx); err != nil {
		log.Fatal(err)
	}

	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	if held, ok := errors.AsType[*fence.HeldError](err); ok {
		// Clock-free: this Locker now watches the holder's record; an
		// Acquire once it has stayed unchanged for a whole lease takes
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

// With synchronised wall clocks (NTP with a known bound), a trusted-clock
// Locker takes over an expired lease without watching it first.
func ExampleNew_trustedClock() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	locker, err := fences3.New(s3.NewFromConfig(cfg), "my-app-locks", &fences3.Options{
		TrustedClock: true,
		MaxClockSkew: 500 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := locker.Acquire(ctx, "nightly-report", time.Minute, nil); err != nil {
		log.Fatal(err)
	}
}

// Opened from a URL, as the fence command does: `fence init` is Create.
// Credentials and the region come from the SDK's usual environment.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "s3://my-app-locks?prefix=locks/&region=eu-west-1", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	if err := locker.Create(ctx); err != nil {
		log.Fatal(err)
	}
	session, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close(ctx)
	// Wait up to a minute; a probe wakes the wait when the holder lets go.
	h, err := session.Lock(ctx, "nightly-report", &fence.LockOptions{Wait: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)
	fmt.Println("writing with token", h.Token())
}

// As gives the client under a Locker, here one opened from a URL, for
// what this package does not do: the ETag of a key's object, as the
// package doc describes it. It needs S3, so it only compiles here.
func Example_as() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "s3://my-app-locks?prefix=locks/", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	var client *s3.Client
	if !locker.As(&client) {
		log.Fatal("not an S3 locker")
	}
	out, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("my-app-locks"), Key: aws.String("locks/nightly-report")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ETag", *out.ETag)
}
