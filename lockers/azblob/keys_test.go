package azblob

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// validateKey checks key as a Locker does: the portable layer's rules
// (driver.ValidateKey), then blobName's.
func validateKey(key string) error {
	if err := driver.ValidateKey("key", key, MaxKeyLen); err != nil {
		return err
	}
	return blobName(key)
}

func TestValidateKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"plain", "jobs-nightly", true},
		{"path", "jobs/nightly/report", true},
		{"percent and spaces", "a %2F b", true},
		{"query and fragment characters", "a?b#c", true},
		{"dot inside", "report.v2/x", true},
		{"unicode", "é名😀", true},
		{"longest", strings.Repeat("a", MaxKeyLen), true},
		{"longest of wide runes", strings.Repeat("名", MaxKeyLen/3), true},
		{"most segments", strings.Repeat("a/", maxSegments-1) + "a", true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", MaxKeyLen+1), false},
		{"too long in bytes", strings.Repeat("名", MaxKeyLen/3+1), false},
		{"invalid UTF-8", "a\xff", false},
		{"NUL", "a\x00b", false},
		{"tab", "a\tb", false},
		{"newline", "a\n", false},
		{"DEL", "a\x7f", false},
		{"C1 control", "a\u0085", false},
		{"non-character", "a\uFFFE", false},
		{"backslash", `a\b`, false},
		{"leading slash", "/a", false},
		{"trailing slash", "a/", false},
		{"double slash", "a//b", false},
		{"dot segment", "a/./b", false},
		{"dot-dot segment", "a/../b", false},
		{"lone dot", ".", false},
		{"trailing dot", "a.", false},
		{"segment ending in a dot", "a./b", false},
		{"too many segments", strings.Repeat("a/", maxSegments) + "a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validateKey(tt.key)
			if tt.ok && err != nil {
				t.Fatalf("validateKey(%q) = %v; want nil", tt.key, err)
			}
			if !tt.ok {
				if _, ok := errors.AsType[*fence.InvalidError](err); !ok {
					t.Fatalf("validateKey(%q) = %v; want a *fence.InvalidError", tt.key, err)
				}
			}
		})
	}
}

// FuzzValidateKey checks that validateKey never panics and accepts only
// keys that Azure stores unchanged as blob names.
func FuzzValidateKey(f *testing.F) {
	for _, s := range []string{"a", "a/b", "a/../b", "a.", `a\b`, "é名", "a\x00", "/", strings.Repeat("a/", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if validateKey(key) != nil {
			return
		}
		if key == "" || len(key) > MaxKeyLen || !utf8.ValidString(key) || strings.ContainsAny(key, "\x00\\\t\n\r") {
			t.Fatalf("validateKey(%q) accepted a key it must refuse", key)
		}
		segs := strings.Split(key, "/")
		if len(segs) > maxSegments {
			t.Fatalf("validateKey(%q) accepted %d segments", key, len(segs))
		}
		for _, s := range segs {
			if s == "" || strings.HasSuffix(s, ".") {
				t.Fatalf("validateKey(%q) accepted the segment %q", key, s)
			}
		}
	})
}

// inputLocker returns a Locker on a container that does not exist, and
// the counter of the requests it sends: input it refuses sends nothing,
// input it accepts gets as far as the service, which answers that the
// container is missing.
func inputLocker(t *testing.T) (*testLocker, *counter) {
	t.Helper()
	n := &counter{}
	return newLocker(t, azuritetest.Client(t, "fence-missing-"+strings.ToLower(key(t)), n, false), nil), n
}

// wantInput fails t unless err, of a call that sent sent requests, is a
// refusal of the input (ErrInvalid, nothing sent) when ok is false, or
// the service's answer that the container is missing when ok is true.
func wantInput(t *testing.T, what string, err error, sent int64, ok bool) {
	t.Helper()
	switch {
	case ok && !errors.Is(err, fence.ErrStoreMissing):
		t.Errorf("%s: %v; want it accepted and sent (an error matching fence.ErrStoreMissing)", what, err)
	case !ok && (!errors.Is(err, fence.ErrInvalid) || sent != 0):
		t.Errorf("%s: %v after %d requests; want an error matching fence.ErrInvalid and nothing sent", what, err, sent)
	}
}

// TestOwners checks the owner ids Acquire accepts: what Azure metadata
// holds unchanged, up to MaxOwnerLen bytes. (An empty owner asks for a
// new one: see fence.AcquireOptions.)
func TestOwners(t *testing.T) {
	t.Parallel()
	tests := []struct {
		owner string
		ok    bool
	}{
		{fence.NewOwnerID(), true},
		{"worker 7 on host-a", true},
		{strings.Repeat("o", MaxOwnerLen), true},
		{strings.Repeat("o", MaxOwnerLen+1), false},
		{"é", false},
		{"a\nb", false},
		{" a", false},
		{"a ", false},
	}
	l, n := inputLocker(t)
	for _, tt := range tests {
		before := n.n.Load()
		_, err := l.Acquire(t.Context(), "k", MinTTL, &fence.AcquireOptions{Owner: tt.owner})
		wantInput(t, fmt.Sprintf("Acquire with owner %q", tt.owner), err, n.n.Load()-before, tt.ok)
	}
}

// TestTTLs checks the lease durations Acquire, Renew and Release accept:
// whole seconds from MinTTL to MaxTTL.
func TestTTLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ttl time.Duration
		ok  bool
	}{
		{MinTTL, true},
		{30 * time.Second, true},
		{MaxTTL, true},
		{0, false},
		{-MinTTL, false},
		{MinTTL - time.Second, false},
		{MaxTTL + time.Second, false},
		{MinTTL + time.Millisecond, false},
		{-1, false}, // Azure's infinite lease is not offered
	}
	l, n := inputLocker(t)
	for _, tt := range tests {
		before := n.n.Load()
		_, err := l.Acquire(t.Context(), "k", tt.ttl, nil)
		wantInput(t, fmt.Sprintf("Acquire for %v", tt.ttl), err, n.n.Load()-before, tt.ok)
		// A lease this Locker did not give out, but whose ValidUntil
		// lies ahead, reaches the driver's own checks.
		lease := fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: tt.ttl, ValidUntil: time.Now().Add(time.Hour)}
		before = n.n.Load()
		_, err = l.Renew(t.Context(), lease)
		wantInput(t, fmt.Sprintf("Renew for %v", tt.ttl), err, n.n.Load()-before, tt.ok)
		before = n.n.Load()
		err = l.Release(t.Context(), lease)
		wantInput(t, fmt.Sprintf("Release for %v", tt.ttl), err, n.n.Load()-before, tt.ok)
	}
}
