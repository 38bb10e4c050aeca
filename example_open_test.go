package fence_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/lockers/memory"   // registers mem:// for OpenLocker
	_ "github.com/fencekit/fence/resources/memory" // registers mem:// for OpenResource
)

// Open a locker from a URL, as a program does from its configuration.
// Importing a backend registers its schemes (package backends imports
// them all); mem:// is the in-process locker.
func ExampleOpenLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "mem://", nil) // e.g. os.Getenv("FENCE_STORE")
	if err != nil {
		panic(err)
	}
	defer locker.Close()
	fmt.Println("backend:", locker.Name())

	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)
	h, err := sess.Lock(ctx, "nightly", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("token:", h.Token())

	_, err = fence.OpenLocker(ctx, "nosuch://host/x", nil)
	fmt.Println(err != nil)
	// Output:
	// backend: memory
	// token: 1
	// true
}

// Open a resource from a URL. Resources opened as mem://NAME share their
// values within the process, as two clients of one bucket would.
func ExampleOpenResource() {
	ctx := context.Background()
	writer, err := fence.OpenResource(ctx, "mem://reports", nil)
	if err != nil {
		panic(err)
	}
	defer writer.Close()
	reader, err := fence.OpenResource(ctx, "mem://reports", nil)
	if err != nil {
		panic(err)
	}
	defer reader.Close()

	if err := writer.Put(ctx, "daily.csv", 7, []byte("date,total\n")); err != nil {
		panic(err)
	}
	value, token, err := reader.Get(ctx, "daily.csv")
	fmt.Printf("%q token %d %v\n", value, token, err)
	// Output:
	// "date,total\n" token 7 <nil>
}

// Inspect describes a key without taking it: an operator's view of who
// holds it, with which token, until when.
func ExampleLocker_Inspect() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "mem://", nil)
	if err != nil {
		panic(err)
	}
	defer locker.Close()
	lease, err := locker.Acquire(ctx, "nightly", time.Minute, nil)
	if err != nil {
		panic(err)
	}

	info, err := locker.Inspect(ctx, "nightly")
	fmt.Println(info.Held, info.Token, info.Owner == lease.Owner, err)

	_ = locker.Release(ctx, lease)
	info, _ = locker.Inspect(ctx, "nightly")
	fmt.Println(info.Held, info.Token) // the last token stays

	info, _ = locker.Inspect(ctx, "never-taken")
	fmt.Println(info)
	// Output:
	// true 1 true <nil>
	// false 1
	// lock "never-taken" free (never acquired)
}
