package fencedobj

import (
	"context"
	"errors"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// MaxLost is how many conditional writes in a row may fail without an
// answer (or with a 5xx) before a write loop gives up and reports an
// unknown outcome.
const MaxLost = 5

// Loop is the bookkeeping of one fenced write loop: read the object,
// refuse a lower token, write on condition that the object is still the
// one read, and after a lost race or a lost answer read again. It turns
// the loop's failures into the errors the contract asks for: a
// *fence.StaleTokenError only when no attempt may have been applied, a
// *fence.UnknownOutcomeError once one may have been.
type Loop struct {
	Key     string
	Token   fence.Token
	Backoff backoff.Policy

	// Maybe is set once an attempt may have been applied: it failed
	// without an answer or with a server error.
	Maybe bool
	// Conditioned is the ETag that attempt was conditioned on: reading
	// the object back with another ETag and this write's id shows the
	// attempt was applied.
	Conditioned string
	// LastErr is that attempt's error.
	LastErr error

	lost int // attempts in a row without an answer
}

// Unknown returns err as it is until an attempt may have been applied,
// and then as a *fence.UnknownOutcomeError with highest, the highest
// token seen (0 when not known).
func (l *Loop) Unknown(err error, highest fence.Token) error {
	if !l.Maybe {
		return err
	}
	return &fence.UnknownOutcomeError{Key: l.Key, Token: l.Token, Highest: highest, Err: err}
}

// Pause waits before attempt n (none before the first), and returns the
// error to return when ctx ends first.
func (l *Loop) Pause(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	if err := Pause(ctx, l.Backoff.Delay(n)); err != nil {
		return l.Unknown(errors.Join(err, l.LastErr), 0)
	}
	return nil
}

// ReadFailed returns the error to return when reading the object failed
// with err.
func (l *Loop) ReadFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return l.Unknown(WithCtx(ctx, err), 0)
	}
	return err
}

// Stale returns the error to return when the object holds highest, above
// the loop's token: a *fence.StaleTokenError, or an unknown outcome when
// an attempt may have been applied and then overtaken.
func (l *Loop) Stale(highest fence.Token) error {
	if l.Maybe {
		return l.Unknown(l.LastErr, highest)
	}
	return &fence.StaleTokenError{Key: l.Key, Token: l.Token, Highest: highest}
}

// Failed settles an attempt that failed with err, conditioned on the
// ETag etag: it returns nil to read again and retry, or the error to
// return. notApplied says the store's answer shows the write was not
// applied (a lost race, or the object read is gone); ambiguous, that it
// may have been (no answer, or a server error). tell turns the store's
// error into the one reported.
func (l *Loop) Failed(ctx context.Context, err error, etag string, notApplied, ambiguous bool, tell func(error) error) error {
	switch {
	case notApplied:
		l.lost = 0
		if ctx.Err() != nil {
			return l.Unknown(WithCtx(ctx, tell(err)), 0)
		}
		return nil
	case ctx.Err() != nil || ambiguous:
		err = tell(err)
		l.Maybe, l.Conditioned, l.LastErr = true, etag, err
		if ctx.Err() != nil {
			return l.Unknown(WithCtx(ctx, err), 0)
		}
		if l.lost++; l.lost >= MaxLost {
			return l.Unknown(err, 0)
		}
		return nil
	}
	return tell(err)
}
