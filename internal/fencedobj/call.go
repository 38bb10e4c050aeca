package fencedobj

import (
	"context"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// NewBackoff returns the pauses of a write loop between attempts, from
// min doubling up to max; zero takes the default, 10 ms and 1 s. A
// negative value, or min above max, is a *fence.InvalidError naming the
// options MinBackoff and MaxBackoff.
func NewBackoff(min, max time.Duration) (backoff.Policy, error) {
	p := backoff.Policy{First: 10 * time.Millisecond, Max: time.Second}
	if min < 0 || max < 0 {
		return p, &fence.InvalidError{Field: "backoff", Reason: "negative"}
	}
	if min > 0 {
		p.First = min
	}
	if max > 0 {
		p.Max = max
	}
	if p.First > p.Max {
		return p, &fence.InvalidError{Field: "backoff", Reason: fmt.Sprintf("MinBackoff %v is above MaxBackoff %v", p.First, p.Max)}
	}
	return p, nil
}

// DriverOf returns the driver under r, or a *fence.InvalidError when r is
// nil or not a resource of the constructor maker ("s3.New") that makes
// drivers of type D.
func DriverOf[D driver.Resource](r *fence.Resource, maker string) (D, error) {
	var none D
	if r == nil {
		return none, &fence.InvalidError{Field: "resource", Reason: "nil"}
	}
	d, ok := driver.ResourceOf(r).(D)
	if !ok {
		return none, &fence.InvalidError{Field: "resource", Reason: fmt.Sprintf("a %s resource, not one of %s", r.Name(), maker)}
	}
	return d, nil
}

// Native returns the driver under r (see DriverOf) after checking the
// input of a package's own call (s3.PutObject, azblob.GetBlob...) as the
// *fence.Resource checks that of its methods: the key, within the
// driver's ResourceInfo().MaxKeyLen; the token, when withToken is set;
// and ctx.
func Native[D driver.Resource](ctx context.Context, r *fence.Resource, maker, key string, token fence.Token, withToken bool) (D, error) {
	var none D
	d, err := DriverOf[D](r, maker)
	if err != nil {
		return none, err
	}
	if err := driver.ValidateKey("key", key, d.ResourceInfo().MaxKeyLen); err != nil {
		return none, err
	}
	if withToken {
		if err := driver.ValidateToken(token); err != nil {
			return none, err
		}
	}
	if err := CtxErr(ctx); err != nil {
		return none, err
	}
	return d, nil
}

// Fail wraps an error of a package's own call as the *fence.Resource
// wraps those of its methods: a *fence.OpError of backend and op, that
// also matches ctx's error once ctx is done.
func Fail(ctx context.Context, backend, op, key string, err error) error {
	return &fence.OpError{Backend: backend, Op: op, Key: key, Err: WithCtx(ctx, err)}
}
