package s3_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	fences3 "github.com/fencekit/fence/resources/s3"
)

// The examples need an S3 server, so they are compiled but not run.

// Connect to MinIO (or S3) and fence a bucket.
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		log.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(os.Getenv("FENCE_S3_ENDPOINT")) // MinIO; leave unset for AWS
		o.UsePathStyle = true
	})
	// MinIO stores keys in a file system: at most 255 bytes between
	// slashes. Drop MaxKeySegmentLen on AWS S3.
	res, err := fences3.New(client, "reports", &fences3.Options{MaxKeySegmentLen: 255})
	if err != nil {
		log.Fatal(err)
	}
	if err := res.Put(ctx, "2026-02-12.csv", 42, []byte("a,b\n1,2\n")); err != nil {
		log.Fatal(err)
	}
}

// Open a fenced bucket from a URL, with credentials from the AWS SDK's
// default chain (environment, shared files, instance roles).
func Example_openResource() {
	ctx := context.Background()
	res, err := fence.OpenResource(ctx, "s3://reports?region=eu-west-1&prefix=acme/", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	if err := res.Put(ctx, "2026-02-12.csv", 42, []byte("a,b\n1,2\n")); err != nil {
		log.Fatal(err)
	}
}

// Upload a file under the token of the lease that produced it: a worker
// whose lease was taken over gets a stale-token error instead of
// overwriting a newer report. The file is streamed, not read into memory.
func ExamplePutObject() {
	ctx := context.Background()
	var res *fence.Resource // from New
	var lease fence.Lease   // from a Locker or the guard

	f, err := os.Open("report-acme-2026-02-12.csv")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	_, err = fences3.PutObject(ctx, res, "reports/acme/2026-02-12.csv", lease.Token, f, &fences3.PutOptions{
		ContentType: "text/csv",
		Metadata:    map[string]string{"worker": lease.Owner},
	})
	var stale *fence.StaleTokenError
	switch {
	case errors.As(err, &stale):
		log.Printf("a newer worker (token %d) owns this report; dropping ours", stale.Highest)
	case err != nil:
		log.Fatal(err)
	}
}

// Read an object with the token of the write that stored it; a deleted
// object (a tombstone) is not found.
func ExampleGetObject() {
	ctx := context.Background()
	var res *fence.Resource // from New

	obj, err := fences3.GetObject(ctx, res, "reports/acme/2026-02-12.csv")
	if errors.Is(err, fence.ErrNotFound) {
		fmt.Println("no report")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer obj.Body.Close()
	fmt.Println("written with token", obj.Token)
	_, _ = io.Copy(os.Stdout, obj.Body)
}

// Delete under a token: a tombstone keeps the token, so a stale worker
// cannot re-create the object afterwards.
func Example_delete() {
	ctx := context.Background()
	var res *fence.Resource // from New
	var lease fence.Lease   // from a Locker or the guard

	if err := res.Delete(ctx, "reports/acme/2026-02-12.csv", lease.Token); err != nil {
		log.Fatal(err)
	}
}
