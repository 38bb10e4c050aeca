package resourcetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fencekit/fence"
)

// The helpers below perform one call and fail the test, naming the call,
// when it does not behave as the contract says.

func mustPut(t *testing.T, r *fence.Resource, name string, token fence.Token, value []byte) {
	t.Helper()
	if err := r.Put(t.Context(), name, token, value); err != nil {
		t.Fatalf("Put(%s, token %d): %v; want it accepted", show(name), token, err)
	}
}

func mustClaim(t *testing.T, r *fence.Resource, name string, token fence.Token) {
	t.Helper()
	if err := r.Claim(t.Context(), name, token); err != nil {
		t.Fatalf("Claim(%s, token %d): %v; want it accepted", show(name), token, err)
	}
}

func mustDelete(t *testing.T, r *fence.Resource, name string, token fence.Token) {
	t.Helper()
	if err := r.Delete(t.Context(), name, token); err != nil {
		t.Fatalf("Delete(%s, token %d): %v; want it accepted", show(name), token, err)
	}
}

// wantValue checks that Get(name) returns value and token.
func wantValue(t *testing.T, r *fence.Resource, name string, value []byte, token fence.Token) {
	t.Helper()
	got, tok, err := r.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%s): %v; want the value of token %d", show(name), err, token)
	}
	if tok != token {
		t.Errorf("Get(%s) token = %d, want %d", show(name), tok, token)
	}
	if !bytes.Equal(got, value) {
		t.Errorf("Get(%s) value = %s, want %s", show(name), brief(got), brief(value))
	}
}

// wantNotFound checks that Get(name) fails with an error matching
// fence.ErrNotFound.
func wantNotFound(t *testing.T, r *fence.Resource, name string) {
	t.Helper()
	got, tok, err := r.Get(t.Context(), name)
	if !errors.Is(err, fence.ErrNotFound) {
		t.Fatalf("Get(%s) = %s, token %d, error %v; want an error matching fence.ErrNotFound", show(name), brief(got), tok, err)
	}
}

func wantHighest(t *testing.T, r *fence.Resource, name string, want fence.Token) {
	t.Helper()
	got, err := r.Highest(t.Context(), name)
	if err != nil {
		t.Fatalf("Highest(%s): %v", show(name), err)
	}
	if got != want {
		t.Errorf("Highest(%s) = %d, want %d", show(name), got, want)
	}
}

// wantStale checks that err refuses token as stale while highest is the
// highest token accepted: it matches fence.ErrStaleToken, and is a
// *fence.StaleTokenError with Token set to token and Highest set to highest
// or 0 (unknown).
func wantStale(t *testing.T, call string, err error, token, highest fence.Token) {
	t.Helper()
	if !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("%s with token %d = %v; want an error matching fence.ErrStaleToken (highest is %d)", call, token, err, highest)
	}
	var se *fence.StaleTokenError
	if !errors.As(err, &se) {
		t.Fatalf("%s = %v (%T); want a *fence.StaleTokenError in its chain", call, err, err)
	}
	if se.Token != token {
		t.Errorf("%s: StaleTokenError.Token = %d, want the refused token %d", call, se.Token, token)
	}
	if se.Highest != 0 && se.Highest != highest {
		t.Errorf("%s: StaleTokenError.Highest = %d, want %d (or 0 if the backend cannot tell)", call, se.Highest, highest)
	}
}

// wantInvalid checks that err matches fence.ErrInvalid and is a
// *fence.InvalidError.
func wantInvalid(t *testing.T, call string, err error) {
	t.Helper()
	if !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("%s = %v; want an error matching fence.ErrInvalid", call, err)
	}
	var ie *fence.InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("%s = %v (%T); want a *fence.InvalidError in its chain", call, err, err)
	}
}

// call is one method of fence.Resource, reduced to its error, so that a
// table can hold them all.
type call struct {
	method string
	do     func(ctx context.Context, r *fence.Resource, name string, token fence.Token) error
}

var calls = []call{
	{"Put", func(ctx context.Context, r *fence.Resource, name string, token fence.Token) error {
		return r.Put(ctx, name, token, []byte("v"))
	}},
	{"Get", func(ctx context.Context, r *fence.Resource, name string, _ fence.Token) error {
		_, _, err := r.Get(ctx, name)
		return err
	}},
	{"Delete", func(ctx context.Context, r *fence.Resource, name string, token fence.Token) error {
		return r.Delete(ctx, name, token)
	}},
	{"Highest", func(ctx context.Context, r *fence.Resource, name string, _ fence.Token) error {
		_, err := r.Highest(ctx, name)
		return err
	}},
	{"Claim", func(ctx context.Context, r *fence.Resource, name string, token fence.Token) error {
		return r.Claim(ctx, name, token)
	}},
}

// brief describes a value for a failure message without printing hundreds
// of kilobytes.
func brief(v []byte) string {
	const limit = 32
	if len(v) <= limit {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%q... (%d bytes)", v[:limit], len(v))
}

// show quotes a name for a failure message, shortening the long ones.
func show(name string) string {
	const limit = 64
	if len(name) <= limit {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q... (%d bytes)", name[:limit], len(name))
}
