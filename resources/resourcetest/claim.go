package resourcetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// claimCases test the sentences of Claim: it raises highest(name) to its
// token without changing what name holds, refuses a lower token as a stale
// Put is refused, and may be repeated.
var claimCases = []testCase{
	{"AbsentStaysAbsent", testClaimAbsent},
	{"ValueKeptTokenRaised", testClaimPresent},
	{"TombstoneStaysTombstone", testClaimTombstone},
	{"LowerTokenIsStale", testClaimStale},
	{"StalePutAfterClaimIsRefused", testClaimFencesPut},
	{"RepeatIsHarmless", testClaimRepeat},
	{"ConcurrentWithPuts", testClaimConcurrent},
	{"LostAnswerIsSettled", testClaimLost},
}

func testClaimAbsent(t *testing.T, s *suite) {
	r, name := s.h.New(t), s.name("claim-absent")
	mustClaim(t, r, name, 5)
	wantNotFound(t, r, name)
	wantHighest(t, r, name, 5)
	// A fresh Resource sees the claim: it is in the store.
	other := s.h.New(t)
	wantNotFound(t, other, name)
	wantHighest(t, other, name, 5)
	wantStale(t, fmt.Sprintf("Put(%s) after Claim(5)", show(name)), other.Put(t.Context(), name, 4, []byte("four")), 4, 5)
	wantNotFound(t, other, name)
	mustPut(t, other, name, 5, []byte("five"))
	wantValue(t, r, name, []byte("five"), 5)
}

func testClaimPresent(t *testing.T, s *suite) {
	r, name := s.h.New(t), s.name("claim-present")
	value := []byte("value of token 3")
	mustPut(t, r, name, 3, value)
	mustClaim(t, r, name, 7)
	// Get returns the same value, now with the claimed token.
	wantValue(t, r, name, value, 7)
	wantHighest(t, r, name, 7)
	// An empty value stays an empty value.
	empty := s.name("claim-empty")
	mustPut(t, r, empty, 2, []byte{})
	mustClaim(t, r, empty, 4)
	wantValue(t, r, empty, []byte{}, 4)
	wantHighest(t, r, empty, 4)
}

func testClaimTombstone(t *testing.T, s *suite) {
	r, name := s.h.New(t), s.name("claim-tomb")
	mustPut(t, r, name, 2, []byte("two"))
	mustDelete(t, r, name, 3)
	mustClaim(t, r, name, 6)
	wantNotFound(t, r, name)
	wantHighest(t, r, name, 6)
	wantStale(t, fmt.Sprintf("Delete(%s) after Claim(6)", show(name)), r.Delete(t.Context(), name, 5), 5, 6)
	wantNotFound(t, r, name)
	wantHighest(t, r, name, 6)
}

func testClaimStale(t *testing.T, s *suite) {
	r, name := s.h.New(t), s.name("claim-stale")
	mustPut(t, r, name, 5, []byte("five"))
	wantStale(t, fmt.Sprintf("Claim(%s) below a Put", show(name)), r.Claim(t.Context(), name, 4), 4, 5)
	wantValue(t, r, name, []byte("five"), 5)
	wantHighest(t, r, name, 5)
	// Below an earlier claim, and on a name that holds nothing.
	absent := s.name("claim-stale")
	mustClaim(t, r, absent, 9)
	wantStale(t, fmt.Sprintf("Claim(%s) below a Claim", show(absent)), r.Claim(t.Context(), absent, 8), 8, 9)
	wantNotFound(t, r, absent)
	wantHighest(t, r, absent, 9)
}

func testClaimFencesPut(t *testing.T, s *suite) {
	r, name := s.h.New(t), s.name("claim-put")
	mustPut(t, r, name, 3, []byte("three"))
	// The newer holder claims with 5; the older holder, still at 4 (at
	// least the stored 3), must now be refused, by Put and by Delete.
	mustClaim(t, r, name, 5)
	older := s.h.New(t)
	wantStale(t, fmt.Sprintf("Put(%s, token 4) after Claim(5)", show(name)), older.Put(t.Context(), name, 4, []byte("four")), 4, 5)
	wantStale(t, fmt.Sprintf("Delete(%s, token 4) after Claim(5)", show(name)), older.Delete(t.Context(), name, 4), 4, 5)
	wantValue(t, r, name, []byte("three"), 5)
	// The claimer writes at its own token, and higher tokens pass.
	mustPut(t, r, name, 5, []byte("five"))
	wantValue(t, older, name, []byte("five"), 5)
	wantHighest(t, older, name, 5)
	mustPut(t, older, name, 6, []byte("six"))
	wantValue(t, r, name, []byte("six"), 6)
}

func testClaimRepeat(t *testing.T, s *suite) {
	r, name := s.h.New(t), s.name("claim-repeat")
	mustPut(t, r, name, 2, []byte("two"))
	for range 3 {
		mustClaim(t, r, name, 4)
	}
	wantValue(t, r, name, []byte("two"), 4)
	wantHighest(t, r, name, 4)
	// Claiming with the token of the stored value is a claim with the
	// current highest too.
	other := s.name("claim-repeat")
	mustPut(t, r, other, 3, []byte("three"))
	mustClaim(t, r, other, 3)
	wantValue(t, r, other, []byte("three"), 3)
	wantHighest(t, r, other, 3)
	// After a Put at the claimed token, claiming it again still passes.
	mustPut(t, r, name, 4, []byte("four"))
	mustClaim(t, r, name, 4)
	wantValue(t, r, name, []byte("four"), 4)
}

// testClaimConcurrent runs writers that each claim a name and then put it
// with the same token, as a read-modify-write that claims first, through
// Resources of their own, with tokens that overtake one another and some
// stale ones. Claims count as writes in the History: an accepted Put or
// Delete below an accepted Claim is a violation like one below a Put.
func testClaimConcurrent(t *testing.T, s *suite) {
	name := s.name("claim-conc")
	writers, writes := s.h.writers(), s.h.writesPerWriter()
	seed := uint64(time.Now().UnixNano())
	t.Logf("%d writers x %d claim-then-put on %q, seed %d", writers, writes, name, seed)
	resources := make([]*fence.Resource, writers)
	for w := range resources {
		resources[w] = s.h.New(t)
	}
	var (
		hist     History
		mu       sync.Mutex
		puts     = map[string]fence.Token{} // value -> token, accepted Puts only
		failures []error
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	record := func(what string, tok fence.Token, err error) {
		mu.Lock()
		defer mu.Unlock()
		if se, ok := errors.AsType[*fence.StaleTokenError](err); err != nil && (!ok || se.Token != tok) {
			failures = append(failures, fmt.Errorf("%s: %w; want nil or a stale-token error for token %d", what, err, tok))
		}
	}
	for w := range writers {
		wg.Go(func() {
			<-start
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			tok := fence.Token(2)
			for i := range writes {
				tok += fence.Token(rng.IntN(3))
				use := tok
				if i%5 == 4 {
					use = 1 // stale once anything was accepted
				}
				r := resources[w]
				err := hist.Write(name, use, func() error { return r.Claim(t.Context(), name, use) })
				record(fmt.Sprintf("writer %d, claim %d, token %d", w, i, use), use, err)
				if err != nil {
					continue
				}
				v := fmt.Sprintf("writer %d, write %d, token %d", w, i, use)
				err = hist.Write(name, use, func() error { return r.Put(t.Context(), name, use, []byte(v)) })
				record(v, use, err)
				if err == nil {
					mu.Lock()
					puts[v] = use
					mu.Unlock()
				}
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
	r := s.h.New(t)
	wantHighest(t, r, name, hist.MaxAccepted(name))
	var top fence.Token
	for _, tok := range puts {
		top = max(top, tok)
	}
	if top == 0 {
		t.Fatal("no Put was accepted")
	}
	got, tok, err := r.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%s) after the writers: %v", show(name), err)
	}
	if _, ok := puts[string(got)]; !ok || tok != hist.MaxAccepted(name) || puts[string(got)] != top {
		t.Errorf("Get(%s) = %s with token %d; want the value of an accepted Put with the highest Put token %d, with the highest accepted token %d", show(name), brief(got), tok, top, hist.MaxAccepted(name))
	}
}

// testClaimLost loses the answer of a Claim that the store applied, where
// the harness's fault reaches a claim: the Claim must still succeed, the
// value stay, the mark be raised.
func testClaimLost(t *testing.T, s *suite) {
	s.skipWithoutLostAnswer(t)
	name, check := s.name("claim-lost"), s.h.New(t)
	mustPut(t, check, name, 3, []byte("three"))
	var fired atomic.Int32
	r := s.h.LostAnswer(t, func() { fired.Add(1) })
	err := r.Claim(t.Context(), name, 4)
	if fired.Load() == 0 {
		t.Skip("the harness's lost answer does not reach a Claim (it loses the answers of Puts and Deletes only)")
	}
	if err != nil {
		t.Fatalf("Claim(%s, token 4), applied but its answer lost: %v; want success after reading back", show(name), err)
	}
	wantValue(t, check, name, []byte("three"), 4)
	wantHighest(t, check, name, 4)
	wantStale(t, fmt.Sprintf("Put(%s) after the lost claim", show(name)), check.Put(t.Context(), name, 3, []byte("three again")), 3, 4)
	mustPut(t, r, name, 4, []byte("four"))
	wantValue(t, check, name, []byte("four"), 4)
}
