package resourcetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// getCases test the sentences of Resource.Get: it returns the value and
// token of the last accepted write, and a name never written gets an error
// matching fence.ErrNotFound.
var getCases = []testCase{
	{"NeverWrittenIsNotFound", func(t *testing.T, s *suite) {
		wantNotFound(t, s.h.New(t), s.name("get-never"))
	}},
	{"ReturnsTheLastAcceptedWrite", func(t *testing.T, s *suite) {
		r, name := s.h.New(t), s.name("get-last")
		mustPut(t, r, name, 3, []byte("first"))
		mustPut(t, r, name, 4, []byte("second"))
		mustPut(t, r, name, 4, []byte("third"))
		_ = r.Put(t.Context(), name, 2, []byte("stale")) // refused; checked in Put cases
		wantValue(t, r, name, []byte("third"), 4)
		// Another Resource on the same store sees the same.
		wantValue(t, s.h.New(t), name, []byte("third"), 4)
	}},
	{"ValuesAreByteExact", func(t *testing.T, s *suite) {
		all := make([]byte, 0, 512)
		for i := range 512 {
			all = append(all, byte(i))
		}
		large := make([]byte, s.h.largeValueLen())
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range large {
			large[i] = byte(rng.Uint32())
		}
		large[0], large[len(large)-1] = 0, 0
		for _, tc := range []struct {
			desc  string
			value []byte
		}{
			{"empty", []byte{}},
			{"nil", nil},
			{"NUL", []byte{0}},
			{"NULs around text", []byte("\x00a\x00b\x00")},
			{"every byte value", all},
			{"invalid UTF-8", []byte{0xff, 0xfe, 0xc3, 0x28}},
			{"text like a token", []byte("12345")},
			{"trailing spaces and newlines", []byte("v \n\r\n\t ")},
			{fmt.Sprintf("%d random bytes", len(large)), large},
		} {
			t.Run(tc.desc, func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.name("get-exact")
				mustPut(t, r, name, 1, tc.value)
				wantValue(t, r, name, tc.value, 1)
				wantValue(t, s.h.New(t), name, tc.value, 1)
			})
		}
	}},
	{"EmptyValueIsNotAbsent", func(t *testing.T, s *suite) {
		// An empty value is a value: Get must not confuse it with a
		// tombstone or a name never written.
		r, name := s.h.New(t), s.name("get-empty")
		mustPut(t, r, name, 2, []byte("x"))
		mustPut(t, r, name, 3, nil)
		wantValue(t, r, name, nil, 3)
	}},
	{"ValuesAreNotShared", func(t *testing.T, s *suite) {
		// Changing the slice passed to Put, or returned by Get, afterwards
		// does not change what is stored.
		r, name := s.h.New(t), s.name("get-copy")
		v := []byte("original")
		mustPut(t, r, name, 1, v)
		copy(v, "CHANGED!")
		wantValue(t, r, name, []byte("original"), 1)
		got, _, err := r.Get(t.Context(), name)
		if err != nil {
			t.Fatalf("Get(%q): %v", name, err)
		}
		copy(got, bytes.Repeat([]byte("X"), len(got)))
		wantValue(t, r, name, []byte("original"), 1)
	}},
}
