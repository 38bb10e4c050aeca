package fence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// tokenMap is a ResourceDriver over a map that counts the calls that reach
// it; zeroToken makes Get answer token 0, as a corrupted store would.
type tokenMap struct {
	calls     int
	zeroToken bool
	values    map[string][]byte
	tokens    map[string]fence.Token
}

func (m *tokenMap) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: "tokenmap", MaxKeyLen: 8, MaxToken: 1000}
}

func (m *tokenMap) Put(_ context.Context, key string, token fence.Token, value []byte) error {
	m.calls++
	if token < m.tokens[key] {
		return &fence.StaleTokenError{Key: key, Token: token, Highest: m.tokens[key]}
	}
	m.values[key], m.tokens[key] = value, token
	return nil
}

func (m *tokenMap) Get(_ context.Context, key string) ([]byte, fence.Token, error) {
	m.calls++
	v, ok := m.values[key]
	if !ok {
		return nil, 0, &fence.NotFoundError{Key: key}
	}
	if m.zeroToken {
		return v, 0, nil
	}
	return v, m.tokens[key], nil
}

func (m *tokenMap) Delete(_ context.Context, key string, token fence.Token) error {
	m.calls++
	delete(m.values, key)
	m.tokens[key] = token
	return nil
}

func (m *tokenMap) Highest(_ context.Context, key string) (fence.Token, error) {
	m.calls++
	return m.tokens[key], nil
}

func (m *tokenMap) Claim(_ context.Context, key string, token fence.Token) error {
	m.calls++
	if token < m.tokens[key] {
		return &fence.StaleTokenError{Key: key, Token: token, Highest: m.tokens[key]}
	}
	m.tokens[key] = token
	return nil
}

func newTokenMap(t *testing.T) (*fence.Resource, *tokenMap) {
	t.Helper()
	m := &tokenMap{values: map[string][]byte{}, tokens: map[string]fence.Token{}}
	r, err := driver.NewResource(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, m
}

func TestResourceBadInputNeverReachesTheDriver(t *testing.T) {
	t.Parallel()
	r, m := newTokenMap(t)
	ctx := context.Background()
	for name, err := range map[string]error{
		"empty key":       r.Put(ctx, "", 1, nil),
		"long key":        r.Put(ctx, "123456789", 1, nil),
		"token 0":         r.Put(ctx, "k", 0, nil),
		"above MaxToken":  r.Put(ctx, "k", 1001, nil),
		"delete token 0":  r.Delete(ctx, "k", 0),
		"claim token 0":   r.Claim(ctx, "k", 0),
		"claim long key":  r.Claim(ctx, "123456789", 1),
		"claim too high":  r.Claim(ctx, "k", 1001),
		"get invalid key": func() error { _, _, err := r.Get(ctx, "\xff"); return err }(),
	} {
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", name, err)
		}
	}
	if m.calls != 0 {
		t.Errorf("the driver was called %d times for invalid input", m.calls)
	}
}

func TestResourceErrorsNameBackendOpAndKey(t *testing.T) {
	t.Parallel()
	r, m := newTokenMap(t)
	ctx := context.Background()
	if err := r.Put(ctx, "k", 5, []byte("v")); err != nil {
		t.Fatal(err)
	}
	err := r.Put(ctx, "k", 4, []byte("w"))
	if want := `fence/tokenmap: put "k": stale token 4 (highest seen 5)`; err == nil || err.Error() != want {
		t.Errorf("stale Put = %v; want %q", err, want)
	}
	if se, ok := errors.AsType[*fence.StaleTokenError](err); !ok || se.Highest != 5 {
		t.Errorf("stale Put error %v is not a *StaleTokenError with Highest 5", err)
	}
	err = r.Claim(ctx, "k", 3)
	if want := `fence/tokenmap: claim "k": stale token 3 (highest seen 5)`; err == nil || err.Error() != want {
		t.Errorf("stale Claim = %v; want %q", err, want)
	}
	if !errors.Is(err, fence.ErrStaleToken) {
		t.Errorf("stale Claim error %v does not match ErrStaleToken", err)
	}
	m.zeroToken = true
	if _, _, err := r.Get(ctx, "k"); !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("Get of a value stored with token 0 = %v; want ErrCorrupt", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	calls := m.calls
	if _, err := r.Highest(ended, "k"); !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "fence/tokenmap: highest") {
		t.Errorf("Highest on an ended ctx = %v; want context.Canceled, named", err)
	}
	if m.calls != calls {
		t.Error("a call on an ended ctx reached the driver")
	}
}
