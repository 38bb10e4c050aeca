// Package createtest checks that creating a store concurrently succeeds.
// Every replica of a deployment starts at once, and a program that
// creates its tables, container or bucket at start-up (Locker.Create,
// Resource.Create) does so in each replica: all but one of them create
// what another is creating, and each must succeed. A test of a store
// with a create step calls Race with its own fresh store.
package createtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
)

// Creators is the number of concurrent creators of one store in a round.
const Creators = 3

// Rounds is the number of rounds Race runs, each on a fresh store: a race
// lost once in five rounds still fails the test.
const Rounds = 5

// Create is one creator's call: Create of its own Locker or Resource, on
// a client of its own.
type Create func(ctx context.Context) error

// Race runs Rounds rounds, one subtest each. In each round fresh returns
// n (= Creators) create calls on one store not created yet (a table,
// container or bucket of a new name, removed when the test ends), each
// through a client of its own where the store allows it, as separate
// replicas would; Race releases them at once and fails the round when
// any of them returns an error.
func Race(t *testing.T, fresh func(t *testing.T, n int) []Create) {
	t.Helper()
	for round := range Rounds {
		t.Run(fmt.Sprintf("round%d", round+1), func(t *testing.T) {
			creates := fresh(t, Creators)
			start := make(chan struct{})
			errs := make([]error, len(creates))
			var wg sync.WaitGroup
			for i, create := range creates {
				wg.Go(func() {
					<-start
					errs[i] = create(t.Context())
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("creator %d of %d: %v", i+1, len(creates), err)
				}
			}
		})
	}
}

// OpenResources opens n resources from rawURL, each with clients of its
// own, closed when the test ends, and returns their Create calls: fresh's
// answer for a resource whose URL names a store not created yet.
func OpenResources(t *testing.T, rawURL string, n int) []Create {
	t.Helper()
	creates := make([]Create, n)
	for i := range creates {
		r, err := fence.OpenResource(t.Context(), rawURL, nil)
		if err != nil {
			t.Fatalf("OpenResource(%s): %v", redact.URL(rawURL), err)
		}
		t.Cleanup(func() { _ = r.Close() })
		creates[i] = r.Create
	}
	return creates
}
