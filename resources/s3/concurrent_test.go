package s3

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestConcurrentWritersWithLostAnswers runs writers on one key, each
// through a transport that loses the answer to every third PUT (after
// MinIO applied it) and with the SDK's retries off, and checks the history
// of accepted and refused writes: no token lower than one accepted before
// it may be accepted, no refusal may be false, and a lost answer may
// surface only as an *fence.UnknownOutcomeError when a higher write overtook it
// before it could be read back.
func TestConcurrentWritersWithLostAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const writers, writes = 4, 12
	key := emulators.UniqueName("conc-lost-")
	var (
		h  resourcetest.History
		wg sync.WaitGroup
	)
	for w := range writers {
		f := newFaulty(t)
		f.add(rule{method: "PUT", path: key, n: writes, every: 3, fault: drop})
		o := minioOptions
		o.MinBackoff, o.MaxBackoff = 1e6, 2e7
		b := testResource(t, newClient(t, f, noRetries), e.bucket, &o)
		wg.Go(func() {
			for i := range writes {
				// Tokens interleave across writers; every fourth write is
				// a delete.
				tok := fence.Token(i*writers + (w*7)%writers + 1)
				var err error
				if i%4 == 3 {
					err = h.Write(key, tok, func() error { return b.Delete(t.Context(), key, tok) })
				} else {
					err = h.Write(key, tok, func() error { return b.Put(t.Context(), key, tok, fmt.Appendf(nil, "w%d-%d", w, i)) })
				}
				var ue *fence.UnknownOutcomeError
				if resourcetest.OutcomeOf(err) == resourcetest.Unknown && !(errors.As(err, &ue) && ue.Highest > tok) {
					t.Errorf("writer %d, token %d: %v; want accepted, stale, or overtaken after a lost answer", w, tok, err)
				}
			}
		})
	}
	wg.Wait()
	if err := h.Check(); err != nil {
		t.Error(err)
	}
	top := h.MaxAccepted(key)
	if got, err := e.b.Highest(t.Context(), key); err != nil || got != top {
		t.Errorf("Highest = %d, %v; want the highest accepted token %d", got, err, top)
	}
	outcomes := map[resourcetest.Outcome]int{}
	for _, op := range h.Ops() {
		outcomes[op.Outcome]++
	}
	t.Logf("%d writes: %v; highest accepted %d", writers*writes, outcomes, top)
}
