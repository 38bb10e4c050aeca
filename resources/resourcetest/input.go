package resourcetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"unicode/utf8"
)

// inputCases test what every method does with bad input (an error matching
// fence.ErrInvalid, never a panic, nothing written) and with a context that
// is already done.
var inputCases = []testCase{
	{"BadNamesAreInvalid", func(t *testing.T, s *suite) {
		n := s.h.MaxKeyLen
		for _, tc := range []struct {
			desc string
			name string
		}{
			{"empty", ""},
			{"one byte too long", s.nameOfLen("in-long", n+1, false)},
			{"one byte too long in multibyte runes", s.nameOfLen("in-long", n+1, true)},
			{"invalid UTF-8", s.name("in-utf8") + "\xff\xfe"},
			{"truncated rune", s.name("in-utf8") + "\xe5\x90"},
			{"NUL byte", s.name("in-nul") + "\x00x"},
		} {
			for _, c := range calls {
				t.Run(tc.desc+"/"+c.method, func(t *testing.T) {
					t.Parallel()
					r := s.h.New(t)
					err := c.do(t.Context(), r, tc.name, 1)
					wantInvalid(t, fmt.Sprintf("%s(%s)", c.method, show(tc.name)), err)
					if c.method == "Put" && len(tc.name) > n {
						// Nothing was written under a shortened name.
						wantNotFound(t, r, validPrefix(tc.name, n))
					}
				})
			}
		}
	}},
	{"TokenZeroIsInvalid", func(t *testing.T, s *suite) {
		for _, c := range calls {
			if c.method != "Put" && c.method != "Delete" && c.method != "Claim" {
				continue
			}
			t.Run(c.method, func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.name("in-zero")
				err := c.do(t.Context(), r, name, 0)
				wantInvalid(t, c.method+" with token 0", err)
				wantNotFound(t, r, name)
				wantHighest(t, r, name, 0)
				// On a name that holds a value, nothing changes either.
				mustPut(t, r, name, 1, []byte("one"))
				err = c.do(t.Context(), r, name, 0)
				wantInvalid(t, c.method+" with token 0", err)
				wantValue(t, r, name, []byte("one"), 1)
				wantHighest(t, r, name, 1)
			})
		}
	}},
	{"CancelledContextIsHonoured", func(t *testing.T, s *suite) {
		for _, c := range calls {
			t.Run(c.method, func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.name("in-ctx")
				mustPut(t, r, name, 1, []byte("one"))
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				err := c.do(ctx, r, name, 2)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("%s(%q) with a cancelled context = %v; want an error matching context.Canceled", c.method, name, err)
				}
			})
		}
	}},
}

// validPrefix returns the longest prefix of name that has at most n bytes
// and does not end inside a rune.
func validPrefix(name string, n int) string {
	name = name[:n]
	for !utf8.ValidString(name) {
		name = name[:len(name)-1]
	}
	return name
}
