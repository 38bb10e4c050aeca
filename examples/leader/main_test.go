package main

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testlockers"
)

// The program on the in-memory store.
func Example() {
	main()
	// Output:
	// follower: send requests to 10.0.0.1:8080
	// follower: the term ended
	// follower: send requests to 10.0.0.2:8080
	// the second term's token is higher: true
}

// The program on every store of the shared table.
func TestRunOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		if err := run(ctx, b.Lockers(t, 1, nil)[0], "api-leader", max(ttl, 3*time.Second)); err != nil {
			t.Fatal(err)
		}
	})
}
