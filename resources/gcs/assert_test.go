package gcs

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

// mustPut fails the test unless r.Put succeeds.
func mustPut(t testing.TB, r *fence.Resource, key string, token fence.Token, value []byte) {
	t.Helper()
	if err := r.Put(t.Context(), key, token, value); err != nil {
		t.Fatalf("Put(%q, %d): %v", key, token, err)
	}
}

// wantValue fails the test unless key holds value written with token.
func wantValue(t testing.TB, r *fence.Resource, key, value string, token fence.Token) {
	t.Helper()
	got, tok, err := r.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if string(got) != value || tok != token {
		t.Errorf("Get(%q) = %q, token %d; want %q, token %d", key, got, tok, value, token)
	}
}

// wantNotFound fails the test unless Get(key) reports ErrNotFound.
func wantNotFound(t testing.TB, r *fence.Resource, key string) {
	t.Helper()
	if _, _, err := r.Get(t.Context(), key); !errors.Is(err, fence.ErrNotFound) {
		t.Errorf("Get(%q) = %v; want ErrNotFound", key, err)
	}
}
