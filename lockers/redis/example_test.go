package redis_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/redis"
)

// Each job takes the key, does its work with the lease's token (pass it to
// a fenced resource), and releases. It needs a server, so it only
// compiles here.
func ExampleNew() {
	ctx := context.Background()
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
	defer client.Close()

	locker, err := redis.New(client, &redis.Options{Prefix: "app:locks:"})
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

// Behind Sentinel, with every acquisition acknowledged by a replica
// before the lease is handed out (see the package doc, "Failover"). It
// needs servers, so it only compiles here.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster?min-replicas=1&wait-timeout=200ms", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close() // closes the client the opener made

	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	var notReplicated *redis.ReplicationError
	if errors.As(err, &notReplicated) {
		fmt.Println("no replica acknowledged; try again later")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	_ = locker.Release(ctx, lease)
}

// The client under a Locker, for what this package does not do: here,
// how long the lease on a key has left on the server (see the package
// doc, "Records", for the key names). It needs a server, so it only
// compiles here.
func Example_as() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "redis://localhost:6379/0", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	var client goredis.UniversalClient
	if !locker.As(&client) {
		log.Fatal("not a Redis locker")
	}
	left, err := client.PTTL(ctx, "fence:{nightly-report}:lock").Result()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the lease has", left, "left")
}
