package redis_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	redislock "github.com/fencekit/fence/lockers/redis"
	fenceredis "github.com/fencekit/fence/resources/redis"
)

// A cache entry rebuilt under a lock: a rebuild that stalled past its
// lease and finishes after a newer one is refused, so the cache keeps the
// newer report. It needs a server, so it only compiles here.
func Example_cacheRebuild() {
	ctx := context.Background()
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
	defer client.Close()
	locker, err := redislock.New(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	cache, err := fenceredis.New(client, &fenceredis.Options{Prefix: "cache:"})
	if err != nil {
		log.Fatal(err)
	}

	lease, err := locker.Acquire(ctx, "rebuild/report", time.Minute, nil)
	if errors.Is(err, fence.ErrHeld) {
		return // another worker is rebuilding
	}
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Release(ctx, lease) //nolint:errcheck // it expires otherwise

	report := []byte("... a slow rebuild ...")
	err = cache.Put(ctx, "report", lease.Token, report)
	var stale *fence.StaleTokenError
	if errors.As(err, &stale) {
		fmt.Printf("a newer rebuild (token %d) has written; ours (token %d) is dropped\n", stale.Highest, stale.Token)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
}

// The go-redis client under a resource, for readers outside fence: the
// value named N is the hash PREFIX+N (HGET cache:report value).
func ExampleNew_as() {
	cache, err := fenceredis.New(goredis.NewClient(&goredis.Options{}), &fenceredis.Options{Prefix: "cache:"})
	if err != nil {
		log.Fatal(err)
	}
	var client goredis.UniversalClient
	fmt.Println(cache.As(&client))
	// Output: true
}
