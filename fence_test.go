package fence_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/lockers/memory"
)

func TestParseToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want fence.Token
		ok   bool
	}{
		{"1", 1, true},
		{"42", 42, true},
		{"18446744073709551615", 18446744073709551615, true},
		{"0", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"18446744073709551616", 0, false},
		{"0x10", 0, false},
		{"1e3", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		got, err := fence.ParseToken(tt.in)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("ParseToken(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			continue
		}
		var inv *fence.InvalidError
		if !errors.Is(err, fence.ErrInvalid) || !errors.As(err, &inv) || inv.Field != "token" {
			t.Errorf("ParseToken(%q) error = %v; want an InvalidError for field token", tt.in, err)
		}
	}
}

func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"1", "0", "", "007", "18446744073709551615", "18446744073709551616", "-3", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := fence.ParseToken(s)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("ParseToken(%q): error %v does not match ErrInvalid", s, err)
			}
			return
		}
		if tok == 0 {
			t.Fatalf("ParseToken(%q) accepted token 0", s)
		}
		back, err := fence.ParseToken(tok.String())
		if err != nil || back != tok {
			t.Fatalf("round trip of %d: got %d, %v", tok, back, err)
		}
	})
}

func TestErrorsMatchSentinels(t *testing.T) {
	t.Parallel()
	reason := errors.New("renew: connection reset")
	tests := []struct {
		err      error
		sentinel error
		text     string
	}{
		{&fence.HeldError{Key: "k", Owner: "o", Token: 3, ValidUntil: time.Unix(10, 0)}, fence.ErrHeld, `lock "k" held by another owner (token 3) until 1970-01-01T00:00:10Z`},
		{&fence.StaleTokenError{Key: "r", Token: 2, Highest: 5}, fence.ErrStaleToken, `stale token 2 for "r" (highest seen 5)`},
		{&fence.StaleTokenError{Key: "r", Token: 2}, fence.ErrStaleToken, `stale token 2 for "r"`},
		{&fence.LeaseLostError{Key: "k", Token: 4, Err: reason}, fence.ErrLeaseLost, "connection reset"},
		{&fence.InvalidError{Field: "ttl", Reason: "negative"}, fence.ErrInvalid, "invalid ttl: negative"},
		{&fence.CorruptError{Key: "k", Reason: "token is not a number"}, fence.ErrCorrupt, "token is not a number"},
		{&fence.NotFoundError{Key: "n", Tombstone: true}, fence.ErrNotFound, "deleted"},
		{&fence.UnknownOutcomeError{Key: "r", Token: 4, Highest: 5, Err: reason}, fence.ErrUnknownOutcome, "replaced by token 5 (a newer holder's; the resource now refuses writes with token 4)"},
	}
	all := []error{fence.ErrHeld, fence.ErrNotHeld, fence.ErrLeaseLost, fence.ErrStaleToken, fence.ErrInvalid, fence.ErrCorrupt, fence.ErrNotFound, fence.ErrUnknownOutcome}
	for _, tt := range tests {
		wrapped := fmt.Errorf("outer: %w", tt.err)
		for _, s := range all {
			if got := errors.Is(wrapped, s); got != (s == tt.sentinel) {
				t.Errorf("errors.Is(%T, %v) = %v", tt.err, s, got)
			}
		}
		if !strings.HasPrefix(tt.err.Error(), "fence: ") || !strings.Contains(tt.err.Error(), tt.text) {
			t.Errorf("%T.Error() = %q; want the prefix fence: and %q", tt.err, tt.err.Error(), tt.text)
		}
	}
	if !errors.Is(&fence.LeaseLostError{Err: fence.ErrNotHeld}, fence.ErrNotHeld) {
		t.Error("LeaseLostError does not unwrap to its reason")
	}
}

func TestNewOwnerID(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := fence.NewOwnerID()
		if !uuid.MatchString(id) {
			t.Fatalf("NewOwnerID() = %q; want a version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewOwnerID() repeated %q", id)
		}
		seen[id] = true
	}
	l := memory.New(nil)
	if lease, err := l.Acquire(t.Context(), "set", time.Minute, &fence.AcquireOptions{Owner: "me"}); err != nil || lease.Owner != "me" {
		t.Errorf("Acquire with Owner set = %v, %v; want owner me", lease, err)
	}
	if lease, err := l.Acquire(t.Context(), "unset", time.Minute, nil); err != nil || !uuid.MatchString(lease.Owner) {
		t.Errorf("Acquire with nil options = %q, %v; want a fresh owner id", lease.Owner, err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	renew := func(lease fence.Lease) error {
		_, err := l.Renew(t.Context(), lease)
		return err
	}
	invalid := []error{
		driver.ValidateKey("key", "", 10),
		driver.ValidateKey("key", "01234567890", 10),
		driver.ValidateKey("key", "a\xffb", 10),
		driver.ValidateKey("key", "a\x00b", 10),
		driver.ValidateTTL(0, time.Millisecond, time.Hour),
		driver.ValidateTTL(-time.Second, time.Millisecond, time.Hour),
		driver.ValidateTTL(2*time.Hour, time.Millisecond, time.Hour),
		driver.ValidateToken(0),
		renew(fence.Lease{Key: "k", Owner: "", Token: 1, TTL: time.Second}),
		renew(fence.Lease{Key: "k", Owner: "o", Token: 0, TTL: time.Second}),
		renew(fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: 0}),
		renew(fence.Lease{Key: "", Owner: "o", Token: 1, TTL: time.Second}),
	}
	for i, err := range invalid {
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("case %d: got %v; want ErrInvalid", i, err)
		}
	}
	valid := []error{
		driver.ValidateKey("key", "0123456789", 10),
		driver.ValidateKey("key", "日本", 10),
		driver.ValidateTTL(time.Millisecond, time.Millisecond, time.Hour),
		driver.ValidateTTL(time.Hour, time.Millisecond, time.Hour),
		driver.ValidateToken(1),
	}
	for i, err := range valid {
		if err != nil {
			t.Errorf("valid case %d: got %v", i, err)
		}
	}
}
