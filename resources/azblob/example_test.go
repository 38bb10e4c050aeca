package azblob_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	fenceazblob "github.com/fencekit/fence/resources/azblob"
)

// The examples need an Azure Blob endpoint, so they compile but do not
// run as tests; the package's tests run the same calls on Azurite.

// A client for the container "reports" from a connection string (for
// Azurite, the one scripts/emulators.sh exports), then a fenced write and
// read of one blob.
func Example() {
	ctx := context.Background()
	client, err := container.NewClientFromConnectionString(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), "reports", nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := fenceazblob.New(client, nil)
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

	// A writer whose lease was taken over still holds token 41: refused.
	err = res.Put(ctx, "report/acme/2024-05-01.csv", 41, []byte("stale"))
	var stale *fence.StaleTokenError
	if errors.As(err, &stale) {
		fmt.Printf("refused: token %d is below %d\n", stale.Token, stale.Highest)
	}
}

// Open a fenced container from a URL, with the credentials of
// AZURE_STORAGE_CONNECTION_STRING, and stream an upload with its content
// type.
func Example_openResource() {
	ctx := context.Background()
	res, err := fence.OpenResource(ctx, "azblob://reports?prefix=acme/", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	if err := res.Create(ctx); err != nil { // the container; no error if it exists
		log.Fatal(err)
	}
	out, err := fenceazblob.PutBlob(ctx, res, "2024-05-01.csv", 42, strings.NewReader("a,b\n1,2\n"),
		&fenceazblob.PutOptions{ContentType: "text/csv"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written in", out.Attempts, "attempt(s)")
}
