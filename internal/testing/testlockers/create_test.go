package testlockers_test

import (
	"testing"

	"github.com/fencekit/fence/internal/testing/createtest"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// TestConcurrentCreate checks that replicas starting together may all
// create the locker's store: on every store with a create step, three
// lockers opened from one fresh URL, each with a client of its own, call
// Create at once, and each succeeds.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	for _, b := range testlockers.Backends {
		if b.InProcess || b.Keyspace {
			continue // nothing to create
		}
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
				url := b.URL(t)
				creates := make([]createtest.Create, n)
				for i := range creates {
					creates[i] = b.OpenLocker(t, url, nil).Create
				}
				return creates
			})
		})
	}
}
