package lockertest

import (
	"crypto/rand"
	"fmt"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// Run runs the conformance suite against the backend h drives: one subtest
// per sentence of the *fence.Locker contract, grouped by the method (or the
// part of the contract) it tests. The subtests run in parallel, each on keys
// of its own, so leases of one case never meet another's; the cases that
// restart the store or pass time with Harness.Pass run alone, before the
// others, and so does the case that renews a lease of the backend's
// MinTTL on the real clock (the one case that sleeps). Apart from it, only
// Expire and Pass let time pass, and the suite never times anything.
func Run(t *testing.T, h Harness) {
	t.Helper()
	switch {
	case h.New == nil:
		t.Fatal("lockertest: Harness.New is nil")
	case h.Expire == nil:
		t.Fatal("lockertest: Harness.Expire is nil")
	case h.Pass == nil:
		t.Fatal("lockertest: Harness.Pass is nil")
	case h.TTL <= 0 || h.ShortTTL <= 0:
		t.Fatalf("lockertest: Harness.TTL (%v) and ShortTTL (%v) must be positive", h.TTL, h.ShortTTL)
	case h.ShortTTL > h.TTL:
		t.Fatalf("lockertest: Harness.ShortTTL (%v) is longer than TTL (%v)", h.ShortTTL, h.TTL)
	case h.MaxKeyLen < MinKeyLen:
		t.Fatalf("lockertest: Harness.MaxKeyLen is %d; the suite needs at least %d", h.MaxKeyLen, MinKeyLen)
	}
	s := &suite{h: h, run: strings.ToLower(rand.Text()[:10])}
	t.Logf("lockertest: keys of this run start with %q", "lt-"+s.run)
	// Restarting the store would disturb the other cases: it runs alone,
	// before them.
	t.Run("Restart", func(t *testing.T) {
		t.Run("TokensIncreaseAcrossIt", func(t *testing.T) { restartCase(t, s) })
	})
	// Passing time by less than ShortTTL would disturb the other cases
	// too: the case of a job outliving its TTL runs alone, before them.
	t.Run("Lease", func(t *testing.T) {
		t.Run("AnyCopyRenewsAndReleasesAfterManyRenewals", func(t *testing.T) { copiesCase(t, s) })
	})
	// The shortest lease is renewed on the real clock; on a harness with
	// a fake clock another case's Expire would end it: it runs alone too.
	t.Run("TTL", func(t *testing.T) {
		t.Run("MinTTLIsKeptAndBelowIsRefused", func(t *testing.T) { minTTLCase(t, s) })
	})
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

// groups lists every case, by the method or the part of the contract
// whose sentence it tests.
var groups = []struct {
	name  string
	cases []testCase
}{
	{"Acquire", acquireCases},
	{"Token", tokenCases},
	{"Renew", renewCases},
	{"RenewBatch", batchCases},
	{"Release", releaseCases},
	{"Break", breakCases},
	{"Inspect", inspectCases},
	{"Keys", keyCases},
	{"Context", contextCases},
	{"Input", inputCases},
	{"Publish", publishCases},
	{"LockAll", multiCases},
}

// suite is the state one Run shares between its cases.
type suite struct {
	h   Harness
	run string // random, so runs on a persistent store never meet
	seq atomic.Uint64
}

// key returns a fresh key, unique to this run and this call, that tells
// which case made it. It is at most MinKeyLen bytes of [a-z0-9_-].
func (s *suite) key(t *testing.T) string {
	tag := path.Base(t.Name())
	if len(tag) > 32 {
		tag = tag[:32]
	}
	return fmt.Sprintf("lt-%s-%d-%s", s.run, s.seq.Add(1), tag)
}

// keyOfLen returns a fresh key of exactly n bytes (n >= MinKeyLen). With
// wide set it is made mostly of two- and three-byte runes, so that a
// backend counting runes instead of bytes is caught.
func (s *suite) keyOfLen(t *testing.T, n int, wide bool) string {
	var b strings.Builder
	b.WriteString(s.key(t) + "-")
	for wide && b.Len()+len("é名") <= n {
		b.WriteString("é名")
	}
	for b.Len() < n {
		b.WriteByte('a')
	}
	return b.String()
}

// locker returns a new Locker from the harness.
func (s *suite) locker(t *testing.T) *fence.Locker {
	t.Helper()
	l := s.h.New(t)
	if l == nil {
		t.Fatal("lockertest: Harness.New returned nil")
	}
	return l
}

// now reads the harness clock; ok is false when the harness has none.
func (s *suite) now() (now time.Time, ok bool) {
	if s.h.Now == nil {
		return time.Time{}, false
	}
	return s.h.Now(), true
}
