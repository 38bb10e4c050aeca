package memory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/memory"
)

// A holder paused past its lease wakes up and writes with its old token:
// the resource refuses, because a later holder has written with a higher
// one.
func ExampleNew() {
	ctx := context.Background()
	r := memory.New(nil)

	_ = r.Put(ctx, "report.csv", 33, []byte("by the old holder"))
	_ = r.Put(ctx, "report.csv", 34, []byte("by the new holder"))

	err := r.Put(ctx, "report.csv", 33, []byte("late write"))
	fmt.Println(errors.Is(err, fence.ErrStaleToken))
	var stale *fence.StaleTokenError
	if errors.As(err, &stale) {
		fmt.Println("refused", stale.Token, "highest", stale.Highest)
	}

	v, tok, _ := r.Get(ctx, "report.csv")
	fmt.Printf("%s (token %d)\n", v, tok)
	// Output:
	// true
	// refused 33 highest 34
	// by the new holder (token 34)
}

// Delete leaves a tombstone carrying its token, so a stale writer cannot
// re-create the value.
func ExampleNew_delete() {
	ctx := context.Background()
	r := memory.New(nil)

	_ = r.Put(ctx, "job/42", 5, []byte("running"))
	_ = r.Delete(ctx, "job/42", 6)

	_, _, err := r.Get(ctx, "job/42")
	fmt.Println(err)
	hi, _ := r.Highest(ctx, "job/42")
	fmt.Println("highest", hi)

	err = r.Put(ctx, "job/42", 5, []byte("running again"))
	fmt.Println(err)
	// Output:
	// fence/memory: get "job/42": not found (deleted)
	// highest 6
	// fence/memory: put "job/42": stale token 5 (highest seen 6)
}
