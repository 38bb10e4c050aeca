package azblob_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/azblob"
)

// This example needs a storage account (or Azurite), so it only compiles.
// It creates the container, takes a lease, uses its token and releases it.
func Example() {
	ctx := context.Background()
	cred, err := container.NewSharedKeyCredential(os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	c, err := container.NewClientWithSharedKeyCredential(
		"https://"+os.Getenv("AZURE_STORAGE_ACCOUNT")+".blob.core.windows.net/locks", cred, nil)
	if err != nil {
		log.Fatal(err)
	}
	locker, err := azblob.New(c, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := locker.Create(ctx); err != nil {
		log.Fatal(err)
	}

	lease, err := locker.Acquire(ctx, "reports/nightly", 30*time.Second, nil)
	if held, ok := errors.AsType[*fence.HeldError](err); ok {
		fmt.Printf("busy: held by %q with token %d\n", held.Owner, held.Token)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	// Write to a fenced resource with lease.Token; renew before
	// lease.ValidUntil (the guard package does both).
	fmt.Println("token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}

// Opening from a URL, with credentials from the environment (here a
// connection string in AZURE_STORAGE_CONNECTION_STRING). This example
// needs a storage account (or Azurite), so it only compiles.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "azblob://locks", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	if err := locker.Create(ctx); err != nil { // the container, if missing
		log.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "reports/nightly", 30*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("token", lease.Token)
	_ = locker.Release(ctx, lease)
}

// Keys are blob names used as given; names that Azure or URL handling
// would change are refused before any request.
func Example_keys() {
	c, err := container.NewClientWithNoCredential("https://account.blob.core.windows.net/locks", nil)
	if err != nil {
		log.Fatal(err)
	}
	locker, err := azblob.New(c, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, key := range []string{"reports/", "reports/./nightly", `reports\nightly`, "v1."} {
		_, err := locker.Acquire(context.Background(), key, azblob.MinTTL, nil)
		fmt.Println(errors.Is(err, fence.ErrInvalid), err)
	}
	// Output:
	// true fence/azblob: acquire "reports/": invalid key: has an empty path segment (a leading or trailing '/', or "//"), which Azure folds
	// true fence/azblob: acquire "reports/./nightly": invalid key: has the path segment ".", which URL handling removes
	// true fence/azblob: acquire "reports\\nightly": invalid key: contains a backslash, which Azure reads as '/'
	// true fence/azblob: acquire "v1.": invalid key: has a path segment ending in '.', which Azure may strip
}

// The lease id of an acquisition is a function of the key, the owner, the
// token and the TTL: an operator can find the Azure lease id of the holder
// that Inspect shows, and every other acquisition has another id.
func ExampleLeaseID() {
	id := azblob.LeaseID("reports/nightly", "worker-7", 42, 30*time.Second)
	fmt.Println(id == azblob.LeaseID("reports/nightly", "worker-7", 42, 30*time.Second))
	fmt.Println(id == azblob.LeaseID("reports/nightly", "worker-7", 43, 30*time.Second))
	// Output:
	// true
	// false
}
