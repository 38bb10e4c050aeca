package resourcetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// concurrentCases test the atomicity sentence: the check and the write are
// one operation, so concurrent writers through separate Resources see one
// high-water mark that never goes down.
var concurrentCases = []testCase{
	{"WritersSeeOneHighWaterMark", testConcurrentWriters},
}

func testConcurrentWriters(t *testing.T, s *suite) {
	name := s.name("conc")
	writers, writes := s.h.writers(), s.h.writesPerWriter()
	seed := uint64(time.Now().UnixNano())
	t.Logf("%d writers x %d writes on %q, seed %d", writers, writes, name, seed)

	// Each writer's tokens climb with random steps, so writers overtake
	// one another; every fifth write uses token 1, which is stale once
	// any write has been accepted (all other tokens are at least 2).
	tokens := make([][]fence.Token, writers)
	for w := range tokens {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		tok := fence.Token(2)
		for i := range writes {
			tok += fence.Token(rng.IntN(3))
			if i%5 == 4 {
				tokens[w] = append(tokens[w], 1)
			} else {
				tokens[w] = append(tokens[w], tok)
			}
		}
	}
	resources := make([]*fence.Resource, writers)
	for w := range resources {
		resources[w] = s.h.New(t)
	}

	var (
		hist     History
		mu       sync.Mutex
		values   = map[string]fence.Token{} // value -> token it was written with, accepted only
		failures []error
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	for w := range writers {
		wg.Go(func() {
			<-start
			for i, tok := range tokens[w] {
				v := fmt.Sprintf("writer %d, write %d, token %d", w, i, tok)
				err := hist.Write(name, tok, func() error {
					return resources[w].Put(t.Context(), name, tok, []byte(v))
				})
				var se *fence.StaleTokenError
				mu.Lock()
				switch {
				case err == nil:
					values[v] = tok
				case errors.As(err, &se):
					if se.Token != tok {
						failures = append(failures, fmt.Errorf("%s: StaleTokenError.Token = %d, want the refused token", v, se.Token))
					}
				default:
					failures = append(failures, fmt.Errorf("%s: %w; want nil or a stale-token error", v, err))
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()

	for _, err := range failures {
		t.Error(err)
	}
	if err := hist.Check(); err != nil {
		t.Error(err)
	}
	rejected := 0
	for _, op := range hist.Ops() {
		if op.Outcome == Rejected {
			rejected++
		}
	}
	t.Logf("%d writes accepted, %d rejected as stale", len(values), rejected)
	if rejected == 0 {
		t.Errorf("no write was rejected, but every write with token 1 after the first accepted write is stale")
	}

	// The final state is that of a write with the highest accepted token.
	top := hist.MaxAccepted(name)
	r := s.h.New(t)
	wantHighest(t, r, name, top)
	got, tok, err := r.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%q) after the writers: %v", name, err)
	}
	if tok != top {
		t.Errorf("Get(%q) token = %d, want the highest accepted token %d", name, tok, top)
	}
	if wt, ok := values[string(got)]; !ok || wt != tok {
		t.Errorf("Get(%q) = %s with token %d, which is not an accepted write with that token", name, brief(got), tok)
	}
}
