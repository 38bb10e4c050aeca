package dynamo

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// TestRoundTrips counts the requests of each method: one each, and one
// more for a failed Acquire where the store does not return the item with
// the failed condition. dynalite ignores ReturnValuesOnConditionCheckFailure
// (an emulator gap), so there the failed Acquire reads the item with a
// GetItem; on DynamoDB the item comes with the error.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	f := newFaulty(t)
	client := emulators.DynamoClient(t, f)
	table := newTable(t, client, nil)
	l, other := newLocker(t, client, table, nil), newLocker(t, client, table, nil)
	var lease fence.Lease
	steps := []struct {
		name     string
		min, max int
		call     func() error
	}{
		{"Acquire", 1, 1, func() (err error) { lease, err = l.Acquire(t.Context(), "job", time.Minute, nil); return err }},
		{"failed Acquire", 1, 2, func() error {
			if _, err := other.Acquire(t.Context(), "job", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
				return err
			}
			return nil
		}},
		{"Renew", 1, 1, func() (err error) { lease, err = l.Renew(t.Context(), lease); return err }},
		{"Inspect", 1, 1, func() error { _, err := l.Inspect(t.Context(), "job"); return err }},
		{"Release", 1, 1, func() error { return l.Release(t.Context(), lease) }},
		{"Break", 1, 1, func() error { return l.Break(t.Context(), "job") }},
	}
	for _, s := range steps {
		before := f.total()
		if err := s.call(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		n := f.total() - before
		if n < s.min || n > s.max {
			t.Errorf("%s made %d requests; want %d to %d", s.name, n, s.min, s.max)
		}
		t.Logf("%s: %d round trips", s.name, n)
	}
}
