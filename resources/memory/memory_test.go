package memory_test

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/memory"
	"github.com/fencekit/fence/resources/resourcetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	resourcetest.Run(t, resourcetest.Harness{
		New:       func(*testing.T) *fence.Resource { return store },
		MaxKeyLen: memory.MaxKeyLen,
		// A wrapper that applied a write and then failed would test the
		// wrapper's read-back, not this resource.
		NoLostAnswer: "the in-memory resource has no transport: a write returns in the goroutine that applied it, so no answer can be lost",
	})
}

func TestNotFoundTellsTombstones(t *testing.T) {
	t.Parallel()
	r := memory.New(nil)
	ctx := t.Context()
	if err := r.Put(ctx, "deleted", 1, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, "deleted", 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key       string
		tombstone bool
	}{
		{"never-written", false},
		{"deleted", true},
	} {
		_, _, err := r.Get(ctx, tc.key)
		var nf *fence.NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("Get(%q) = %v; want a *fence.NotFoundError", tc.key, err)
		}
		if nf.Key != tc.key || nf.Tombstone != tc.tombstone {
			t.Errorf("Get(%q) error = %+v; want Key %q, Tombstone %v", tc.key, nf, tc.key, tc.tombstone)
		}
	}
}

// TestUnfencedFailsTheChecker is the control run: without the token check
// the history checker must see a violation, otherwise it proves nothing
// about the fenced runs.
func TestUnfencedFailsTheChecker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc      string
		unfenced  bool
		wantFault bool
	}{
		{"fenced", false, false},
		{"unfenced", true, true},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			r := memory.New(&memory.Options{Unfenced: tc.unfenced})
			var h resourcetest.History
			// A new holder (5) writes, then a paused old holder (3) wakes
			// up and writes, then deletes.
			for _, tok := range []fence.Token{2, 5, 3} {
				_ = h.Write("ledger", tok, func() error { return r.Put(t.Context(), "ledger", tok, []byte("x")) })
			}
			_ = h.Write("ledger", 4, func() error { return r.Delete(t.Context(), "ledger", 4) })
			err := h.Check()
			if (err != nil) != tc.wantFault {
				t.Fatalf("Check() = %v; want a violation: %v", err, tc.wantFault)
			}
			if err != nil {
				t.Logf("checker reports, as it should:\n%v", err)
			}
		})
	}
}

// TestErrorsNameTheBackend: every error is a *fence.OpError of backend
// "memory" naming the operation and the key, around the contract's error.
func TestErrorsNameTheBackend(t *testing.T) {
	t.Parallel()
	r := memory.New(nil)
	ctx := t.Context()
	if err := r.Put(ctx, "k", 5, []byte("v")); err != nil {
		t.Fatal(err)
	}
	err := r.Put(ctx, "k", 4, []byte("stale"))
	var oe *fence.OpError
	if !errors.As(err, &oe) || oe.Backend != "memory" || oe.Op != "put" || oe.Key != "k" || !errors.Is(err, fence.ErrStaleToken) {
		t.Errorf("stale Put = %v; want a *fence.OpError of memory, put, \"k\", matching ErrStaleToken", err)
	}
	var ie *fence.InvalidError
	if _, err := r.Highest(ctx, ""); !errors.As(err, &ie) || ie.Field != "key" {
		t.Errorf("Highest(\"\") = %v; want a *fence.InvalidError for field \"key\"", err)
	}
}
