package gcs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	fencegcs "github.com/fencekit/fence/resources/gcs"
)

// The examples need a Cloud Storage endpoint, so they compile but do not
// run as tests; the package's tests run the same calls on fake-gcs-server.

// A client for fake-gcs-server (the endpoint scripts/emulators.sh exports
// as FENCE_GCS_ENDPOINT), then a fenced write and read of one object.
func Example() {
	ctx := context.Background()
	client, err := storage.NewClient(ctx,
		option.WithEndpoint(os.Getenv("FENCE_GCS_ENDPOINT")+"/storage/v1/"),
		option.WithoutAuthentication(),
		storage.WithJSONReads())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	res, err := fencegcs.New(client.Bucket("reports"), nil)
	if err != nil {
		log.Fatal(err)
	}

	// token comes from the lease the writer holds (fence.Lease.Token).
	var token fence.Token = 42
	if err := res.Put(ctx, "report/acme/2024-05-01.csv", token, []byte("a,b\n1,2\n")); err != nil {
		log.Fatal(err)
	}
	value, tok, err := res.Get(ctx, "report/acme/2024-05-01.csv")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q written with token %d\n", value, tok)
}

// Open a fenced bucket from a URL, with Application Default Credentials
// (or none on an emulator named by STORAGE_EMULATOR_HOST).
func Example_openResource() {
	ctx := context.Background()
	res, err := fence.OpenResource(ctx, "gs://reports?prefix=acme/", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close() // closes the client the opener made
	if err := res.Put(ctx, "2024-05-01.csv", 42, []byte("a,b\n1,2\n")); err != nil {
		log.Fatal(err)
	}
}

// Upload streams a file: an *os.File is an io.Seeker, so a retry after a
// concurrent write seeks back instead of buffering the file in memory. A
// writer whose lease was taken over gets a stale-token error.
func ExampleUpload() {
	ctx := context.Background()
	client, err := storage.NewClient(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	res, err := fencegcs.New(client.Bucket("reports"), nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("report.csv")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	var token fence.Token = 42 // from the lease
	attrs, err := fencegcs.Upload(ctx, res, "report/acme/2024-05-01.csv", token, f, &fencegcs.UploadOptions{
		ContentType: "text/csv",
		Metadata:    map[string]string{"customer": "acme"},
	})
	var stale *fence.StaleTokenError
	switch {
	case errors.As(err, &stale):
		fmt.Printf("lease lost: token %d, the object has seen %d\n", stale.Token, stale.Highest)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("generation %d\n", attrs.Generation)
	}
}

// NewReader streams an object's content with the token that wrote it.
func ExampleNewReader() {
	ctx := context.Background()
	client, err := storage.NewClient(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	res, err := fencegcs.New(client.Bucket("reports"), nil)
	if err != nil {
		log.Fatal(err)
	}
	r, err := fencegcs.NewReader(ctx, res, "report/acme/2024-05-01.csv")
	var nf *fence.NotFoundError
	if errors.As(err, &nf) {
		fmt.Println("no report; deleted:", nf.Tombstone)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println("written with token", r.Token)
	if _, err := io.Copy(os.Stdout, r); err != nil {
		log.Fatal(err)
	}
}

// Delete leaves a tombstone carrying the token, so a stale writer cannot
// re-create the object afterwards.
func Example_delete() {
	ctx := context.Background()
	client, err := storage.NewClient(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	res, err := fencegcs.New(client.Bucket("reports"), nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := res.Delete(ctx, "report/acme/2024-05-01.csv", 43); err != nil {
		log.Fatal(err)
	}
	err = res.Put(ctx, "report/acme/2024-05-01.csv", 42, []byte("late"))
	fmt.Println(errors.Is(err, fence.ErrStaleToken)) // true
	highest, err := res.Highest(ctx, "report/acme/2024-05-01.csv")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("highest token:", highest) // 43
}
