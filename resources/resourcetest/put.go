package resourcetest

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/fencekit/fence"
)

// putCases test the sentences of Resource.Put: a write carrying token t is
// applied only if t >= highest(name), and then highest(name) becomes t.
var putCases = []testCase{
	{"EqualTokenPasses", func(t *testing.T, s *suite) {
		// One holder writes many times with its one token.
		r, name := s.h.New(t), s.name("put-equal")
		for i := range 5 {
			v := fmt.Appendf(nil, "write %d", i)
			mustPut(t, r, name, 7, v)
			wantValue(t, r, name, v, 7)
		}
		wantHighest(t, r, name, 7)
	}},
	{"HigherTokenAdvances", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("put-higher")
		for _, tok := range []fence.Token{1, 2, 5, 1000} {
			v := fmt.Appendf(nil, "token %d", tok)
			mustPut(t, r, name, tok, v)
			wantValue(t, r, name, v, tok)
			wantHighest(t, r, name, tok)
		}
	}},
	{"LowerTokenIsStaleAndChangesNothing", func(t *testing.T, s *suite) {
		for _, tc := range []struct {
			desc           string
			highest, stale fence.Token
		}{
			{"one below", 10, 9},
			{"far below", 10, 1},
			{"below the top token", s.h.maxToken(), s.h.maxToken() - 1},
		} {
			t.Run(tc.desc, func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.name("put-lower")
				mustPut(t, r, name, tc.highest, []byte("kept"))
				err := r.Put(t.Context(), name, tc.stale, []byte("stale"))
				wantStale(t, fmt.Sprintf("Put(%q)", name), err, tc.stale, tc.highest)
				wantValue(t, r, name, []byte("kept"), tc.highest)
				wantHighest(t, r, name, tc.highest)
				// The refusal must not have lowered the mark for later writers.
				err = r.Put(t.Context(), name, tc.stale, []byte("stale again"))
				wantStale(t, fmt.Sprintf("second Put(%q)", name), err, tc.stale, tc.highest)
			})
		}
	}},
	{"TokensCompareAsUnsignedNumbers", func(t *testing.T, s *suite) {
		// Catches tokens compared as decimal strings ("9" > "10") or as
		// signed 64-bit integers (1<<63 < 1<<63-1).
		for _, tc := range []struct {
			desc      string
			low, high fence.Token
		}{
			{"more digits", 9, 10},
			{"more digits again", 99, 100},
			{"top bit set", math.MaxInt64, math.MaxInt64 + 1},
			{"largest token", math.MaxInt64 + 1, math.MaxUint64},
		} {
			if tc.high > s.h.maxToken() {
				continue // covered by TokensAboveMaxTokenAreInvalid
			}
			t.Run(tc.desc, func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.name("put-numeric")
				mustPut(t, r, name, tc.low, []byte("low"))
				mustPut(t, r, name, tc.high, []byte("high"))
				wantValue(t, r, name, []byte("high"), tc.high)
				wantHighest(t, r, name, tc.high)
				err := r.Put(t.Context(), name, tc.low, []byte("low again"))
				wantStale(t, fmt.Sprintf("Put(%q)", name), err, tc.low, tc.high)
				wantValue(t, r, name, []byte("high"), tc.high)
			})
		}
	}},
	{"TokensAboveMaxTokenAreInvalid", func(t *testing.T, s *suite) {
		top := s.h.maxToken()
		if top == math.MaxUint64 {
			t.Skip("the backend stores every token")
		}
		r, name := s.h.New(t), s.name("put-over")
		mustPut(t, r, name, top, []byte("top"))
		for _, tok := range []fence.Token{top + 1, math.MaxUint64} {
			if err := r.Put(t.Context(), name, tok, []byte("over")); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Put with token %d above MaxToken %d: got %v; want ErrInvalid", tok, top, err)
			}
			if err := r.Delete(t.Context(), name, tok); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Delete with token %d above MaxToken %d: got %v; want ErrInvalid", tok, top, err)
			}
		}
		wantValue(t, r, name, []byte("top"), top)
		wantHighest(t, r, name, top)
	}},
}
