package gcs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

// faultyWriters runs writers on one object, each through its own client
// whose transport loses the answer of about one upload in five (after the
// emulator applied it), answers about one in eight with 429 without
// forwarding it, and holds every upload a moment before forwarding it, so
// that writers overlap. It returns the history of their Puts.
func faultyWriters(t *testing.T, unconditional bool) *resourcetest.History {
	const writers, writes = 4, 15
	bucketName := newBucket(t, newClient(t, nil)).BucketName()
	key := "faulty"
	seed := uint64(time.Now().UnixNano())
	t.Logf("%d writers x %d writes, seed %d", writers, writes, seed)
	var (
		hist resourcetest.History
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := range writers {
		ft := newFaultTransport(t)
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		var rngMu sync.Mutex
		ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
			rngMu.Lock()
			roll := rng.IntN(40)
			rngMu.Unlock()
			if roll < 5 {
				return answer(req, http.StatusTooManyRequests), nil
			}
			time.Sleep(2 * time.Millisecond) // widen the window between check and write
			resp, err := next.RoundTrip(req)
			if err != nil || roll >= 32 {
				if err == nil {
					resp.Body.Close()
				}
				return nil, errDropped
			}
			return resp, nil
		})
		r := testResource(t, newClient(t, ft).Bucket(bucketName), fastOptions)
		bucketIn(t, r).unconditional = unconditional
		tokens := make([]fence.Token, writes)
		tok := fence.Token(2)
		for i := range tokens {
			tok += fence.Token(rng.IntN(3))
			tokens[i] = tok
			if i%5 == 4 {
				tokens[i] = 1
			}
		}
		wg.Go(func() {
			for i, tok := range tokens {
				err := hist.Write(key, tok, func() error {
					return r.Put(t.Context(), key, tok, fmt.Appendf(nil, "writer %d write %d", w, i))
				})
				// A lost answer overtaken by a higher token is an unknown
				// outcome, which History counts as possibly applied.
				if err != nil && !errors.Is(err, fence.ErrStaleToken) && !errors.Is(err, fence.ErrUnknownOutcome) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("writer %d, write %d, token %d: %w", w, i, tok, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	return &hist
}

// TestFaultyWritersKeepOneHighWaterMark checks with resourcetest.History
// that lost answers and throttling never let a lower token in after a
// higher one.
func TestFaultyWritersKeepOneHighWaterMark(t *testing.T) {
	t.Parallel()
	hist := faultyWriters(t, false)
	if err := hist.Check(); err != nil {
		t.Error(err)
	}
	accepted := 0
	for _, op := range hist.Ops() {
		if op.Outcome == resourcetest.Accepted {
			accepted++
		}
	}
	if accepted == 0 {
		t.Error("no write was accepted")
	}
}

// TestControlWithoutPreconditionIsCaught is the control run: the same
// writers with the generation precondition removed (check, then a blind
// write). The checker must find violations, or it proves nothing above.
func TestControlWithoutPreconditionIsCaught(t *testing.T) {
	t.Parallel()
	hist := faultyWriters(t, true)
	err := hist.Check()
	if err == nil {
		t.Fatal("the history of unconditional writes passed the checker; the control run shows nothing")
	}
	t.Logf("as expected without the precondition: %.300v", err)
}
