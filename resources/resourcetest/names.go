package resourcetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// nameCases test what the contract says of names: each has its own value
// and high-water mark, and any valid name up to the backend's limit works.
var nameCases = []testCase{
	{"AreIndependent", func(t *testing.T, s *suite) {
		// Names that share a prefix or differ in case only are still
		// different names.
		r, base := s.h.New(t), s.name("names-indep")
		others := []string{base + "/child", base + "-more", strings.ToUpper(base), base + "."}
		mustPut(t, r, base, 10, []byte("base"))
		for i, name := range others {
			tok := fence.Token(i + 1)
			wantNotFound(t, r, name)
			wantHighest(t, r, name, 0)
			mustPut(t, r, name, tok, []byte(name))
			wantValue(t, r, name, []byte(name), tok)
		}
		for i, name := range others {
			mustDelete(t, r, name, fence.Token(i+1))
		}
		wantValue(t, r, base, []byte("base"), 10)
		wantHighest(t, r, base, 10)
		mustDelete(t, r, base, 10)
		for i, name := range others {
			wantHighest(t, r, name, fence.Token(i+1))
			mustPut(t, r, name, fence.Token(i+1), []byte("again"))
		}
	}},
	{"OfMaxKeyLenBytesWork", func(t *testing.T, s *suite) {
		for _, wide := range []bool{false, true} {
			t.Run(fmt.Sprintf("multibyte=%v", wide), func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.nameOfLen("names-max", s.h.MaxKeyLen, wide)
				mustPut(t, r, name, 2, []byte("longest"))
				wantValue(t, r, name, []byte("longest"), 2)
				wantHighest(t, r, name, 2)
				mustDelete(t, r, name, 2)
				wantNotFound(t, r, name)
				err := r.Put(t.Context(), name, 1, nil)
				wantStale(t, "Put of the longest name after Delete", err, 1, 2)
			})
		}
	}},
	{"UnicodeWorks", func(t *testing.T, s *suite) {
		for _, suffix := range []string{"/päth/to/öbject", " with spaces ", "名前", "emoji-😀", "a+b=c&d?e#f%20"} {
			t.Run(suffix, func(t *testing.T) {
				t.Parallel()
				r, name := s.h.New(t), s.name("names-uni")+suffix
				mustPut(t, r, name, 3, []byte(name))
				wantValue(t, r, name, []byte(name), 3)
				wantHighest(t, r, name, 3)
			})
		}
	}},
}
