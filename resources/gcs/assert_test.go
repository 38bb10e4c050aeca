package gcs

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

// mustPut fails the test unless r.Put succeeds.
func mustPut(t testing.TB, r fence.Resource, name string, token fence.Token, value []byte) {
	t.Helper()
	if err := r.Put(t.Context(), name, token, value); err != nil {
		t.Fatalf("Put(%q, %d): %v", name, token, err)
	}
}

// wantValue fails the test unless name holds value written with token.
func wantValue(t testing.TB, r fence.Resource, name, value string, token fence.Token) {
	t.Helper()
	got, tok, err := r.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	if string(got) != value || tok != token {
		t.Errorf("Get(%q) = %q, token %d; want %q, token %d", name, got, tok, value, token)
	}
}

// wantNotFound fails the test unless Get(name) reports ErrNotFound.
func wantNotFound(t testing.TB, r fence.Resource, name string) {
	t.Helper()
	if _, _, err := r.Get(t.Context(), name); !errors.Is(err, fence.ErrNotFound) {
		t.Errorf("Get(%q) = %v; want ErrNotFound", name, err)
	}
}
