package gcs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/gcs"
)

// The bucket is created once; each job then takes the key, does its work
// with the lease's token (pass it to a fenced resource) and releases. It
// needs Cloud Storage (or STORAGE_EMULATOR_HOST), so it only compiles here.
func ExampleNew() {
	ctx := context.Background()
	client, err := storage.NewClient(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	bucket := client.Bucket("my-project-locks")
	if err := gcs.CreateBucket(ctx, bucket, "my-project"); err != nil {
		log.Fatal(err)
	}

	// One Locker for the whole process: what it saw counts for all its
	// sessions.
	locker, err := gcs.New(bucket, &gcs.Options{Prefix: "locks/"})
	if err != nil {
		log.Fatal(err)
	}

	// 30 s leases, renewed every 10 s by a guard: well above Cloud
	// Storage's one write per second per object.
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
	client, err := storage.NewClient(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	locker, err := gcs.New(client.Bucket("my-project-locks"), &gcs.Options{
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

// After a call whose outcome is unknown (ctx ended while the request was
// in flight), Inspect shows whether an Acquire with a chosen owner id got
// the key.
func Example_inspect() {
	ctx := context.Background()
	client, err := storage.NewClient(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	locker, err := gcs.New(client.Bucket("my-project-locks"), nil)
	if err != nil {
		log.Fatal(err)
	}
	owner := fence.NewOwnerID()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = locker.Acquire(short, "nightly-report", time.Minute, &fence.AcquireOptions{Owner: owner})
	if errors.Is(err, context.DeadlineExceeded) {
		info, err := locker.Inspect(ctx, "nightly-report")
		if err != nil {
			log.Fatal(err)
		}
		if info.Held && info.Owner == owner {
			// It landed. Renew and Release need the lease's local
			// deadline: Inspect's ValidUntil is a safe one.
			lease := fence.Lease{Key: info.Key, Owner: owner, Token: info.Token, TTL: time.Minute, ValidUntil: info.ValidUntil}
			if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
				log.Fatal(err)
			}
		}
	}
}

// Opened from a URL, as the fence command does: `fence init` is Create.
// On an emulator, set STORAGE_EMULATOR_HOST; the project comes from the
// URL or GOOGLE_CLOUD_PROJECT.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "gs://my-project-locks?prefix=locks/&project=my-project", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	if err := locker.Create(ctx); err != nil {
		log.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	_ = locker.Release(ctx, lease)
}

// As gives the bucket under a Locker, here one opened from a URL, for
// what this package does not do: the generation of a key's object, as
// the package doc describes it. It needs Cloud Storage, so it only
// compiles here.
func Example_as() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "gs://my-project-locks?prefix=locks/", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	var bucket *storage.BucketHandle
	if !locker.As(&bucket) {
		log.Fatal("not a Cloud Storage locker")
	}
	attrs, err := bucket.Object("locks/nightly-report").Attrs(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("generation", attrs.Generation)
}
