// Command leader shows an observable election: replicas campaign for one
// key, each publishing the address it serves on; a follower that does not
// campaign sees each term start with the leader's address, and end.
//
//	go run ./examples/leader                      # an in-memory store
//	go run ./examples/leader -store postgres://...  # any store fence opens
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	_ "github.com/fencekit/fence/lockers/memory" // mem://
)

func main() {
	store := flag.String("store", "mem://leader-example", "URL of the lock store (fence.OpenLocker)")
	key := flag.String("key", "api-leader", "the key the replicas campaign for")
	ttl := flag.Duration("ttl", 15*time.Second, "the leaders' lease")
	flag.Parse()
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, *store, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	if err := run(ctx, locker, *key, *ttl); err != nil {
		log.Fatal(err)
	}
}

// run starts the follower, then replica a; once a leads, replica b
// campaigns and a steps down, so b leads; then both stop.
func run(ctx context.Context, locker *fence.Locker, key string, ttl time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, err := election.Observe(ctx, locker, key, nil)
	if err != nil {
		return err
	}
	follow := func() (election.Leader, error) { // prints until a leader with an address shows up
		for c := range f.Changes() {
			if c.Ended != election.NotEnded {
				fmt.Println("follower: the term ended")
			}
			if (c.Started() || c.ValueChanged()) && c.Leader.Value != "" {
				fmt.Println("follower: send requests to", c.Leader.Value)
				return c.Leader, nil
			}
		}
		return election.Leader{}, fmt.Errorf("no leader: %w", context.Cause(ctx))
	}

	a, stopA, err := replica(ctx, locker, key, ttl, "10.0.0.1:8080")
	if err != nil {
		return err
	}
	defer stopA()
	first, err := follow()
	if err != nil {
		return err
	}

	_, stopB, err := replica(ctx, locker, key, ttl, "10.0.0.2:8080")
	if err != nil {
		return err
	}
	defer stopB()
	if err := a.Resign(ctx); err != nil { // a steps down (a deploy, say)
		return err
	}
	second, err := follow()
	if err != nil {
		return err
	}
	fmt.Println("the second term's token is higher:", second.Term > first.Term)
	return nil
}

// replica campaigns for key with leases of ttl, publishing addr with each
// term, until the returned stop is called.
func replica(ctx context.Context, locker *fence.Locker, key string, ttl time.Duration, addr string) (*election.Candidate, func(), error) {
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: ttl})
	if err != nil {
		return nil, nil, err
	}
	c, err := election.New(sess, key, &election.Options{
		Value:         addr,
		RetryInterval: 100 * time.Millisecond,
		Holdoff:       time.Hour, // after stepping down, leave the key to the others
	})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := c.Campaign(ctx, func(ctx context.Context, term *fence.Handle) error {
			// Serve on addr; every write to a protected resource carries term.Token().
			<-ctx.Done()
			return nil
		})
		if ctx.Err() == nil {
			log.Printf("replica %s: %v", addr, err) // a key or TTL the store refuses
		}
	}()
	return c, func() { cancel(); <-done }, nil
}
