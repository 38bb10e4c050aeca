package election

import (
	"context"
	"errors"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// inaugurate publishes the candidate's value with the new term t and
// marks it leading. A store error is retried until ctx ends; an error
// matching fence.ErrNotHeld means the term is already over, and is
// returned. A store that keeps no values (errors.ErrUnsupported) leads
// without one.
func (c *Candidate) inaugurate(ctx context.Context, t *term) error {
	select {
	case c.pub <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-c.pub }()
	retry := backoff.Policy{First: min(100*time.Millisecond, c.s.retry), Max: c.s.retry}
	for failures := 0; ; {
		err := t.h.Publish(ctx, c.value)
		switch {
		case err == nil, errors.Is(err, errors.ErrUnsupported):
			c.mu.Lock()
			t.leading = true
			c.mu.Unlock()
			return nil
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case errors.Is(err, fence.ErrNotHeld), errors.Is(err, fence.ErrInvalid):
			return err
		}
		failures++
		if !c.sleep(ctx, retry.Delay(failures)) {
			return context.Cause(ctx)
		}
	}
}

// Proclaim changes the candidate's public value (Options.Value) for the
// running term, if it leads, and for every later term. While it leads,
// Proclaim publishes value at once (fence.Handle.Publish) and returns
// that call's error: one matching fence.ErrNotHeld when the term ended
// meanwhile, one matching errors.ErrUnsupported when the store keeps no
// values. When it does not lead, Proclaim returns nil: its next term
// starts with value. A value longer than fence.MaxValueLen is refused
// with an error matching fence.ErrInvalid and changes nothing. Proclaim
// waits for a publish in progress (the first of a term, which retries
// store errors) and returns context.Cause(ctx) if ctx ends first.
func (c *Candidate) Proclaim(ctx context.Context, value string) error {
	if len(value) > fence.MaxValueLen {
		return invalid("value", "%d bytes exceed fence.MaxValueLen (%d)", len(value), fence.MaxValueLen)
	}
	select {
	case c.pub <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-c.pub }()
	c.value = value
	h, ok := c.Leader()
	if !ok {
		return nil
	}
	return h.Publish(ctx, value)
}
