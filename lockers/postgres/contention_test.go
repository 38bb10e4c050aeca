package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestContention: in each round, contenders try the same free key at once
// and nobody releases before all have answered, so exactly one must win.
// Even rounds use a new key (contenders race to insert its row), odd ones
// reuse the last key after its winner released it (they race to update).
// Tokens must grow by one each time and nothing but ErrHeld may fail.
func TestContention(t *testing.T) {
	t.Parallel()
	const contenders, rounds = 8, 30
	pool := newPool(t, contenders, nil)
	l := newTable(t, pool)
	var last fence.Token
	key := ""
	for round := range rounds {
		if round%2 == 0 {
			key, last = fmt.Sprintf("key-%d", round), 0
		}
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			leases = make([]fence.Lease, contenders)
			errs   = make([]error, contenders)
		)
		for i := range contenders {
			wg.Go(func() {
				<-start
				leases[i], errs[i] = l.Acquire(t.Context(), key, time.Minute, nil)
			})
		}
		close(start)
		wg.Wait()
		var winners []fence.Lease
		for i, err := range errs {
			switch {
			case err == nil:
				winners = append(winners, leases[i])
			case !errors.Is(err, fence.ErrHeld):
				t.Fatalf("round %d: contender %d: %v", round, i, err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1: %+v", round, len(winners), winners)
		}
		w := winners[0]
		if w.Token != last+1 {
			t.Errorf("round %d: token %d, want %d", round, w.Token, last+1)
		}
		last = w.Token
		for i, err := range errs {
			var held *fence.HeldError
			if errors.As(err, &held) && held.Owner != "" && (held.Owner != w.Owner || held.Token != w.Token) {
				t.Errorf("round %d: contender %d saw holder %q token %d, but %q won with %d",
					round, i, held.Owner, held.Token, w.Owner, w.Token)
			}
		}
		if err := l.Release(t.Context(), w); err != nil {
			t.Fatalf("round %d: Release: %v", round, err)
		}
	}
}
