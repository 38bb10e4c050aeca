package dynamo_test

import (
	"testing"

	"github.com/fencekit/fence/internal/testing/createtest"
)

// TestConcurrentCreate checks that replicas starting together may all
// create the table: three resources opened from one dynamodb:// URL of a
// fresh table, each with a client of its own, call Create at once, and
// each succeeds once the table is ACTIVE.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
		raw, _ := emulatorURL(t, "")
		return createtest.OpenResources(t, raw, n)
	})
}
