package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/redlock"
)

// Three independent masters, each with a client that fails fast; each job
// takes the key on a quorum of them, writes with the lease's token (pass
// it to a fenced resource), and releases. It needs servers, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	var masters []redlock.Client
	for _, addr := range []string{"redis-a:6379", "redis-b:6379", "redis-c:6379"} {
		c := goredis.NewClient(&goredis.Options{
			Addr:        addr,
			DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
			ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1,
		})
		defer c.Close()
		masters = append(masters, c)
	}
	locker, err := redlock.New(masters, &redlock.Options{Prefix: "app:"})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	var held *fence.HeldError
	if errors.As(err, &held) {
		fmt.Printf("busy: %s holds token %d until %v\n", held.Owner, held.Token, held.ValidUntil)
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

// Importing the package lets fence.OpenLocker open the masters by URL.
// It needs servers, so it only compiles here.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "redlock://redis-a:6379,redis-b:6379,redis-c:6379/?prefix=app:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close() // closes the clients the opener made
	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}
