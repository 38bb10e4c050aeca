// Command hello shows a late write refused by its fencing token: worker A
// takes a lease and writes; its lease ends while A is paused; worker B
// takes the key and writes; A wakes up, writes, and is refused.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/fencekit/fence"
	memlock "github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

func main() {
	ctx := context.Background()
	locker := memlock.New(nil) // issues leases, each with a higher token
	store := memres.New(nil)   // refuses a write whose token is lower than one it has seen
	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	a, err := sess.Lock(ctx, "report", nil) // worker A
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Put(ctx, "report", a.Token(), []byte("draft")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("A wrote with token", a.Token())

	// A pauses past its lease (here: an operator breaks it); B takes the key.
	locker.Break(ctx, "report")
	b, err := sess.Lock(ctx, "report", nil) // worker B
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Put(ctx, "report", b.Token(), []byte("final")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("B wrote with token", b.Token())

	err = store.Put(ctx, "report", a.Token(), []byte("late draft")) // A wakes up
	fmt.Println("A's late write:", err)
	fmt.Println("stale:", errors.Is(err, fence.ErrStaleToken))
}
