package resourcetest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fencekit/fence"
)

// lostCases test the sentence of the contract on lost answers: a write
// whose answer was lost is reconciled by reading the resource back; it
// succeeds if the write is found applied, and when a higher token has
// replaced it since, the error matches fence.ErrUnknownOutcome, never
// fence.ErrStaleToken (which would claim the write was refused) nor the
// raw transport error.
var lostCases = []testCase{
	{"FoundAppliedSucceeds", testLostFound},
	{"ReplacedIsUnknown", testLostReplaced},
}

// lostWrite is a write, by Put or Delete, whose answer the harness loses.
type lostWrite struct {
	desc     string
	existing bool // the name holds a value with token 3 before the write
	delete   bool
}

var lostWrites = []lostWrite{
	{"Put of a new name", false, false},
	{"Put over a value", true, false},
	{"Delete of a value", true, true},
	{"Delete of a new name", false, true},
}

// do runs w with token 4 through r, returning its error and a
// description of the call.
func (w lostWrite) do(t *testing.T, r *fence.Resource, name string) (string, error) {
	if w.delete {
		return fmt.Sprintf("Delete(%s, token 4)", show(name)), r.Delete(t.Context(), name, 4)
	}
	return fmt.Sprintf("Put(%s, token 4)", show(name)), r.Put(t.Context(), name, 4, []byte("four"))
}

// skipWithoutLostAnswer skips the test when the harness cannot lose an
// answer, saying why.
func (s *suite) skipWithoutLostAnswer(t *testing.T) {
	t.Helper()
	if s.h.LostAnswer == nil {
		why := s.h.NoLostAnswer
		if why == "" {
			why = "the harness does not say why"
		}
		t.Skip("Harness.LostAnswer is nil: " + why)
	}
}

// lostResource returns the harness's Resource whose first write loses its
// answer, with after as the hook, and a check that the hook ran once.
func (s *suite) lostResource(t *testing.T, after func()) (*fence.Resource, func()) {
	t.Helper()
	var ran atomic.Int32
	r := s.h.LostAnswer(t, func() {
		ran.Add(1)
		if after != nil {
			after()
		}
	})
	return r, func() {
		t.Helper()
		if n := ran.Load(); n != 1 {
			t.Fatalf("the harness called after %d times; want once, when it lost the write's answer (did the fault fire?)", n)
		}
	}
}

func testLostFound(t *testing.T, s *suite) {
	s.skipWithoutLostAnswer(t)
	for _, w := range lostWrites {
		t.Run(w.desc, func(t *testing.T) {
			t.Parallel()
			name, check := s.name("lost-found"), s.h.New(t)
			if w.existing {
				mustPut(t, check, name, 3, []byte("three"))
			}
			r, fired := s.lostResource(t, nil)
			call, err := w.do(t, r, name)
			fired()
			if err != nil {
				t.Fatalf("%s, applied but its answer lost: %v; want success after reading back", call, err)
			}
			if w.delete {
				wantNotFound(t, check, name)
			} else {
				wantValue(t, check, name, []byte("four"), 4)
			}
			wantHighest(t, check, name, 4)
			// It was applied once, with its token: a lower one is stale.
			wantStale(t, fmt.Sprintf("Put(%s) after the lost write", show(name)), check.Put(t.Context(), name, 3, []byte("three again")), 3, 4)
			// The Resource that lost the answer goes on working.
			mustPut(t, r, name, 5, []byte("five"))
			wantValue(t, check, name, []byte("five"), 5)
		})
	}
}

func testLostReplaced(t *testing.T, s *suite) {
	s.skipWithoutLostAnswer(t)
	for _, w := range lostWrites {
		t.Run(w.desc, func(t *testing.T) {
			t.Parallel()
			name, other := s.name("lost-replaced"), s.h.New(t)
			if w.existing {
				mustPut(t, other, name, 3, []byte("three"))
			}
			// A newer holder writes between the lost write and its
			// read-back: the read-back sees token 6 and cannot tell
			// whether token 4 landed first.
			r, fired := s.lostResource(t, func() {
				if err := other.Put(t.Context(), name, 6, []byte("six")); err != nil {
					t.Errorf("the newer holder's Put(%s, token 6): %v", show(name), err)
				}
			})
			call, err := w.do(t, r, name)
			fired()
			switch {
			case err == nil:
				t.Fatalf("%s, applied, its answer lost, then replaced by token 6: success; want an error matching fence.ErrUnknownOutcome (the read-back cannot tell)", call)
			case errors.Is(err, fence.ErrStaleToken):
				t.Fatalf("%s, applied, its answer lost, then replaced by token 6: %v; want fence.ErrUnknownOutcome, not a stale token (which claims the write was refused)", call, err)
			case !errors.Is(err, fence.ErrUnknownOutcome):
				t.Fatalf("%s, applied, its answer lost, then replaced by token 6: %v; want an error matching fence.ErrUnknownOutcome", call, err)
			}
			if ue, ok := errors.AsType[*fence.UnknownOutcomeError](err); ok {
				if ue.Token != 4 {
					t.Errorf("%s: UnknownOutcomeError.Token = %d, want 4", call, ue.Token)
				}
				if ue.Highest != 0 && ue.Highest != 6 {
					t.Errorf("%s: UnknownOutcomeError.Highest = %d, want 6 (or 0 if the backend cannot tell)", call, ue.Highest)
				}
			}
			wantValue(t, other, name, []byte("six"), 6)
			wantHighest(t, other, name, 6)
		})
	}
}
