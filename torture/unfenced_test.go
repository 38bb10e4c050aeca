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
