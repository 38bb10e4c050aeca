package torture

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
	resmemory "github.com/fencekit/fence/resources/memory"
)

func TestUnfencedAppliesStaleWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r := resmemory.New(nil)
	if err := r.Put(ctx, "r", 5, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(ctx, "r", 3, []byte("stale")); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("fenced Put of a stale token: %v; want fence.ErrStaleToken", err)
	}
	if err := (Unfenced{r}).Put(ctx, "r", 3, []byte("stale")); err != nil {
		t.Fatalf("unfenced Put of a stale token: %v", err)
	}
	if v, _, err := r.Get(ctx, "r"); err != nil || string(v) != "stale" {
		t.Fatalf("Get = %q, %v; want the stale value applied", v, err)
	}
	if err := (Unfenced{r}).Put(ctx, "", 3, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("unfenced Put of an empty name: %v; want fence.ErrInvalid", err)
	}
}

func TestUnfencedClaimRaisesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r := resmemory.New(nil)
	if err := r.Put(ctx, "r", 3, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := (Unfenced{r}).Claim(ctx, "r", 5); err != nil {
		t.Fatalf("unfenced Claim: %v", err)
	}
	if h, err := r.Highest(ctx, "r"); err != nil || h != 3 {
		t.Fatalf("Highest after an unfenced Claim = %d, %v; want 3: a control run's claim must not fence", h, err)
	}
	// A write with a token between the stored and the claimed one still
	// lands, as it would on a store without fencing.
	if err := r.Put(ctx, "r", 4, []byte("between")); err != nil {
		t.Fatalf("Put below the unfenced claim: %v", err)
	}
	// The fenced resource's own Claim does fence.
	if err := r.Claim(ctx, "r", 6); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(ctx, "r", 5, nil); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("Put below a fenced claim: %v; want fence.ErrStaleToken", err)
	}
}
