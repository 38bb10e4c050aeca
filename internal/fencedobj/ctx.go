package fencedobj

import (
	"context"
	"errors"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// CtxErr returns ctx's error with its cause, or nil while ctx is live.
func CtxErr(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return errors.Join(ctx.Err(), c)
	}
	return ctx.Err()
}

// WithCtx returns err, joined with ctx's error when err does not match it
// already, so that errors.Is(err, context.Canceled) holds after a cancel.
func WithCtx(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil && !errors.Is(err, ce) {
		return errors.Join(err, ce)
	}
	return err
}

// Pause waits d before the next attempt of a write loop, or until ctx is
// done, and then returns CtxErr(ctx).
func Pause(ctx context.Context, d time.Duration) error {
	if backoff.Sleep(ctx, d) != nil {
		return CtxErr(ctx)
	}
	return nil
}
