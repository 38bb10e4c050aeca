package torture

import (
	"context"
	"errors"

	"github.com/fencekit/fence"
)

// resource is what the run writes to: a *fence.Resource, or one wrapped
// for a control run (Unfenced).
type resource interface {
	Put(ctx context.Context, name string, token fence.Token, value []byte) error
	Get(ctx context.Context, name string) ([]byte, fence.Token, error)
	Delete(ctx context.Context, name string, token fence.Token) error
	Highest(ctx context.Context, name string) (fence.Token, error)
	Claim(ctx context.Context, name string, token fence.Token) error
}

// maxUnfencedTries bounds the retries of an unfenced write that keeps
// losing races against other writers' tokens.
const maxUnfencedTries = 20

// Unfenced wraps a fenced resource for control runs: every Put is applied
// whatever its token, as on a store that only the lock protects. It reads
// the resource's highest token and writes with the higher of that and the
// caller's token, so the resource's own check never refuses it; the entry
// written keeps the caller's real token, which the checker reads. A write
// that loses a race with another writer between the two steps is tried
// again. Its Claim does nothing, so a control run's read-modify-writes
// read without raising the high-water mark, as on a store without
// fencing. Use it only for resources without an unfenced mode of their
// own.
type Unfenced struct{ resource }

// Claim does nothing: an unfenced store has no high-water mark to raise.
func (u Unfenced) Claim(context.Context, string, fence.Token) error { return nil }

// Put stores value under name, ignoring the resource's high-water mark.
func (u Unfenced) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	var err error
	for range maxUnfencedTries {
		var h fence.Token
		if h, err = u.Highest(ctx, name); err != nil {
			return err
		}
		if err = u.resource.Put(ctx, name, max(h, token), value); !errors.Is(err, fence.ErrStaleToken) {
			return err
		}
	}
	return err
}
