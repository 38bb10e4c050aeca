package resourcetest

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// Run runs the conformance suite against the backend h drives: one subtest
// per sentence of the fence.Resource contract, grouped by method (Put,
// Get, Delete, Highest, Claim) and by topic (Names, Input, Concurrent,
// LostAnswer). The subtests run in parallel, each on names of its own that
// start with "rt-" and a random run id, so runs on a shared, persistent
// store never meet. Run fails at once when h.New is nil or h.MaxKeyLen is
// below MinNameLen.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("resourcetest: Harness.New is nil")
	}
	if h.MaxKeyLen < MinNameLen {
		t.Fatalf("resourcetest: Harness.MaxKeyLen is %d; the suite needs at least %d", h.MaxKeyLen, MinNameLen)
	}
	s := &suite{h: h, run: rand.Text()[:10]}
	t.Logf("resourcetest: names of this run start with %q", "rt-"+s.run)
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.fn(t, s)
				})
			}
		})
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, s *suite)
}

// groups lists every case, by the method whose sentence it tests.
var groups = []struct {
	name  string
	cases []testCase
}{
	{"Put", putCases},
	{"Get", getCases},
	{"Delete", deleteCases},
	{"Highest", highestCases},
	{"Claim", claimCases},
	{"Names", nameCases},
	{"Input", inputCases},
	{"Concurrent", concurrentCases},
	{"LostAnswer", lostCases},
}

// suite is the state one Run shares between its cases.
type suite struct {
	h   Harness
	run string // random, so runs on a persistent store never meet
	seq atomic.Uint64
}

// name returns a fresh name, unique to this run and this call, that tells
// which case made it.
func (s *suite) name(tag string) string {
	return fmt.Sprintf("rt-%s-%s-%d", s.run, tag, s.seq.Add(1))
}

// nameOfLen returns a fresh name of exactly n bytes (n >= MinNameLen). With
// wide set, it is made mostly of two- and three-byte runes, so that a
// backend counting runes instead of bytes is caught.
func (s *suite) nameOfLen(tag string, n int, wide bool) string {
	b := strings.Builder{}
	b.WriteString(s.name(tag) + "-")
	for wide && b.Len()+len("é名") <= n {
		b.WriteString("é名")
	}
	for b.Len() < n {
		b.WriteByte('a')
	}
	return b.String()
}
