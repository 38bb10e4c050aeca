package resourcetest

import (
	"fmt"
	"testing"
)

// deleteCases test the sentences of Resource.Delete: it removes the value
// if token >= highest(name) and leaves a tombstone, so the high-water mark
// outlives the data; deleting an absent name still records the token.
var deleteCases = []testCase{
	{"TombstoneKeepsTheHighWaterMark", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("del-tomb")
		mustPut(t, r, name, 5, []byte("five"))
		mustDelete(t, r, name, 5)
		wantNotFound(t, r, name)
		wantHighest(t, r, name, 5)
		// A stale writer must not re-create the value with an old token.
		err := r.Put(t.Context(), name, 3, []byte("three"))
		wantStale(t, fmt.Sprintf("Put(%q) after Delete", name), err, 3, 5)
		wantNotFound(t, r, name)
		wantHighest(t, r, name, 5)
		// The deleting holder, and later ones, write again.
		mustPut(t, r, name, 5, []byte("five again"))
		wantValue(t, r, name, []byte("five again"), 5)
		mustPut(t, r, name, 6, []byte("six"))
		wantValue(t, r, name, []byte("six"), 6)
		wantHighest(t, r, name, 6)
	}},
	{"LowerTokenIsStaleAndKeepsTheValue", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("del-lower")
		mustPut(t, r, name, 8, []byte("eight"))
		err := r.Delete(t.Context(), name, 7)
		wantStale(t, fmt.Sprintf("Delete(%q)", name), err, 7, 8)
		wantValue(t, r, name, []byte("eight"), 8)
		wantHighest(t, r, name, 8)
	}},
	{"HigherTokenAdvances", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("del-higher")
		mustPut(t, r, name, 3, []byte("three"))
		mustDelete(t, r, name, 7)
		wantNotFound(t, r, name)
		wantHighest(t, r, name, 7)
		err := r.Put(t.Context(), name, 5, []byte("five"))
		wantStale(t, fmt.Sprintf("Put(%q) after Delete", name), err, 5, 7)
		wantNotFound(t, r, name)
	}},
	{"NeverWrittenNameRecordsTheToken", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("del-never")
		mustDelete(t, r, name, 4)
		wantNotFound(t, r, name)
		wantHighest(t, r, name, 4)
		err := r.Put(t.Context(), name, 3, []byte("three"))
		wantStale(t, fmt.Sprintf("Put(%q) after Delete", name), err, 3, 4)
		wantNotFound(t, r, name)
		mustPut(t, r, name, 4, []byte("four"))
		wantValue(t, r, name, []byte("four"), 4)
	}},
	{"TombstoneIsDeletedAgain", func(t *testing.T, s *suite) {
		// Deleting a tombstone is deleting an absent name: not an error,
		// and a higher token is recorded; a lower one is still stale.
		r, name := s.h.New(t), s.name("del-again")
		mustPut(t, r, name, 2, []byte("two"))
		mustDelete(t, r, name, 2)
		mustDelete(t, r, name, 2)
		mustDelete(t, r, name, 9)
		wantHighest(t, r, name, 9)
		err := r.Delete(t.Context(), name, 8)
		wantStale(t, fmt.Sprintf("Delete(%q) of a tombstone", name), err, 8, 9)
		wantNotFound(t, r, name)
		wantHighest(t, r, name, 9)
	}},
	{"SeenByAnotherResource", func(t *testing.T, s *suite) {
		// The tombstone lives in the store, not in one client.
		name := s.name("del-other")
		mustPut(t, s.h.New(t), name, 5, []byte("five"))
		mustDelete(t, s.h.New(t), name, 5)
		r := s.h.New(t)
		wantNotFound(t, r, name)
		wantHighest(t, r, name, 5)
		err := r.Put(t.Context(), name, 4, []byte("four"))
		wantStale(t, fmt.Sprintf("Put(%q) after Delete", name), err, 4, 5)
	}},
}

// highestCases test the sentence of Resource.Highest: the highest token
// accepted for name, including by a Delete; 0 if none was.
var highestCases = []testCase{
	{"NeverWrittenIsZero", func(t *testing.T, s *suite) {
		wantHighest(t, s.h.New(t), s.name("hi-never"), 0)
	}},
	{"StaleWritesDoNotCount", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("hi-stale")
		mustPut(t, r, name, 6, []byte("six"))
		_ = r.Put(t.Context(), name, 2, []byte("two")) // refused
		_ = r.Delete(t.Context(), name, 3)             // refused
		wantHighest(t, r, name, 6)
		mustPut(t, r, name, 6, []byte("six again"))
		wantHighest(t, r, name, 6)
	}},
	{"CountsDeletes", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("hi-del")
		mustPut(t, r, name, 1, []byte("one"))
		mustDelete(t, r, name, 12)
		wantHighest(t, r, name, 12)
	}},
}
