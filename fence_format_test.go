package fence_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// TestOwnerFingerprint: the fingerprint is "owner:" and 12 hex digits,
// the same for the same owner, different for another, empty for none.
func TestOwnerFingerprint(t *testing.T) {
	t.Parallel()
	a, b := fence.NewOwnerID(), fence.NewOwnerID()
	fa := fence.OwnerFingerprint(a)
	if len(fa) != len("owner:")+12 || !strings.HasPrefix(fa, "owner:") || strings.Trim(fa[6:], "0123456789abcdef") != "" {
		t.Errorf("OwnerFingerprint(%q) = %q, want owner: and 12 hex digits", a, fa)
	}
	if fence.OwnerFingerprint(a) != fa || fence.OwnerFingerprint(b) == fa {
		t.Errorf("fingerprints of two owners: %q, %q, %q", fa, fence.OwnerFingerprint(a), fence.OwnerFingerprint(b))
	}
	if strings.Contains(fa[6:], a[:8]) {
		t.Errorf("fingerprint %q shows a part of the owner %q", fa, a)
	}
	// A known value, so that the fingerprint cannot change unnoticed:
	// operators match it across versions.
	if got, want := fence.OwnerFingerprint("worker-7"), "owner:8aca0dd300d2"; got != want {
		t.Errorf("OwnerFingerprint(worker-7) = %q, want %q", got, want)
	}
	if got := fence.OwnerFingerprint(""); got != "" {
		t.Errorf("OwnerFingerprint(\"\") = %q, want \"\"", got)
	}
}

// formats are the ways a program prints a value: every verb fmt knows
// for a struct, and the Sprint family.
var formats = []struct {
	name string
	f    func(v any) string
}{
	{"%v", func(v any) string { return fmt.Sprintf("%v", v) }},
	{"%+v", func(v any) string { return fmt.Sprintf("%+v", v) }},
	{"%#v", func(v any) string { return fmt.Sprintf("%#v", v) }},
	{"%s", func(v any) string { return fmt.Sprintf("%s", v) }},
	{"%q", func(v any) string { return fmt.Sprintf("%q", v) }},
	{"%x", func(v any) string { return fmt.Sprintf("%x", v) }},
	{"%X", func(v any) string { return fmt.Sprintf("%X", v) }},
	{"%d", func(v any) string { return fmt.Sprintf("%d", v) }},
	{"%-80v", func(v any) string { return fmt.Sprintf("%-80v", v) }},
	{"Sprint", func(v any) string { return fmt.Sprint(v) }},
	{"Sprintln", func(v any) string { return fmt.Sprintln(v) }},
}

// hidden returns the forms of owner a printed text must not contain: as
// given, in upper case, and hex-encoded (what %x would make of it).
func hidden(owner string) []string {
	return []string{owner, strings.ToUpper(owner), fmt.Sprintf("%x", owner), fmt.Sprintf("%X", owner)}
}

// TestFormatHidesOwner: a Lease, a LockInfo, a HeldError and the errors
// and events that hold them print no owner id, with whatever verb, by
// value or by pointer, alone or inside a slice, a map or a struct; the
// owner appears as its fingerprint.
func TestFormatHidesOwner(t *testing.T) {
	t.Parallel()
	owner, other := fence.NewOwnerID(), "job-runner-3"
	until := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	lease := fence.Lease{Key: "jobs/x", Owner: owner, Token: 7, TTL: 30 * time.Second, ValidUntil: until}
	info := fence.LockInfo{Key: "jobs/x", Held: true, Owner: other, Token: 8, ValidUntil: until}
	held := &fence.HeldError{Key: "jobs/x", Owner: other, Token: 8, ValidUntil: until}
	reconcile := &fence.ReconcileError{Lease: lease, Found: info, RenewErr: errors.New("timeout")}
	values := []struct {
		name string
		v    any
		// fingerprint is printed by %v.
		fingerprint string
	}{
		{"Lease", lease, fence.OwnerFingerprint(owner)},
		{"*Lease", &lease, fence.OwnerFingerprint(owner)},
		{"LockInfo", info, fence.OwnerFingerprint(other)},
		{"*LockInfo", &info, fence.OwnerFingerprint(other)},
		{"free LockInfo", fence.LockInfo{Key: "k", Owner: other, Token: 3}, fence.OwnerFingerprint(other)},
		{"[]Lease", []fence.Lease{lease, lease}, fence.OwnerFingerprint(owner)},
		{"map", map[string]fence.LockInfo{"k": info}, fence.OwnerFingerprint(other)},
		{"*HeldError", held, ""},
		{"HeldError", *held, ""},
		{"wrapped HeldError", fmt.Errorf("acquire: %w", held), ""},
		{"OpError", &fence.OpError{Backend: "azblob", Op: "acquire", Key: "jobs/x", Err: held}, ""},
		{"*ReconcileError", reconcile, ""},
		{"ReconcileError", *reconcile, fence.OwnerFingerprint(owner)},
		{"LeaseLostError", &fence.LeaseLostError{Key: "jobs/x", Token: 7, Err: reconcile}, ""},
		{"AcquiredEvent", fence.AcquiredEvent{Lease: lease, Attempts: 1}, fence.OwnerFingerprint(owner)},
		{"LeaseLostEvent", fence.LeaseLostEvent{Lease: lease, Cause: reconcile}, fence.OwnerFingerprint(owner)},
		{"AcquireAttemptEvent", fence.AcquireAttemptEvent{Key: "jobs/x", Attempt: 2, Outcome: fence.Busy, Err: held}, ""},
	}
	for _, v := range values {
		for _, f := range formats {
			t.Run(v.name+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				got := f.f(v.v)
				for _, h := range append(hidden(owner), hidden(other)...) {
					if strings.Contains(got, h) {
						t.Fatalf("%s printed the owner id %q: %s", f.name, h, got)
					}
				}
				if v.fingerprint != "" && (f.name == "%v" || f.name == "%+v" || f.name == "%#v" || f.name == "Sprint") && !strings.Contains(got, v.fingerprint) {
					t.Errorf("%s = %s, without the owner's fingerprint %s", f.name, got, v.fingerprint)
				}
			})
		}
	}
}

// TestFormatForms: the forms of a lease and a lock state read as
// documented, and the fields keep the raw owner id.
func TestFormatForms(t *testing.T) {
	t.Parallel()
	owner := "w-1"
	fp := fence.OwnerFingerprint(owner)
	until := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	lease := fence.Lease{Key: "k", Owner: owner, Token: 7, TTL: 30 * time.Second, ValidUntil: until}
	tests := []struct {
		got, want string
	}{
		{lease.String(), `lease "k" token 7 ` + fp + ` ttl 30s until 2026-12-01T20:00:00Z`},
		{fmt.Sprintf("%v", lease), lease.String()},
		{fmt.Sprintf("%+v", lease), `{Key:k Owner:` + fp + ` Token:7 TTL:30s ValidUntil:2026-12-01 20:00:00 +0000 UTC}`},
		{fmt.Sprintf("%#v", lease), `fence.Lease{Key:"k", Owner:"` + fp + `", Token:7, TTL:30000000000, ValidUntil:time.Date(2026, time.December, 1, 20, 0, 0, 0, time.UTC)}`},
		{fmt.Sprintf("%q", lease), `"lease \"k\" token 7 ` + fp + ` ttl 30s until 2026-12-01T20:00:00Z"`},
		{fmt.Sprintf("%x", lease), `%!x(fence.Lease=` + lease.String() + `)`},
		{fmt.Sprintf("[%-40s]", fence.Lease{Key: "k"}), `[lease "k" token 0                       ]`},
		{fence.LockInfo{Key: "k", Held: true, Owner: owner, Token: 7, ValidUntil: until}.String(), `lock "k" held by ` + fp + ` token 7 until 2026-12-01T20:00:00Z`},
		{fence.LockInfo{Key: "k", Held: true}.String(), `lock "k" held by owner unknown token 0`},
		{fence.LockInfo{Key: "k", Owner: owner, Token: 7}.String(), `lock "k" free (last ` + fp + ` token 7)`},
		{fence.LockInfo{Key: "k"}.String(), `lock "k" free (never acquired)`},
		{fmt.Sprintf("%#v", &fence.HeldError{Key: "k", Owner: owner, Token: 7}), `&fence.HeldError{Key:"k", Owner:"` + fp + `", Token:7, ValidUntil:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)}`},
		{fmt.Sprintf("%v", &fence.HeldError{Key: "k", Owner: owner, Token: 7}), `fence: lock "k" held by another owner (token 7)`},
		{fmt.Sprintf("%+v", fence.HeldError{Key: "k", Owner: owner, Token: 7}), `fence: lock "k" held by another owner (token 7)`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
	}
	if lease.Owner != owner {
		t.Errorf("Lease.Owner = %q, want the raw %q", lease.Owner, owner)
	}
}

// TestHandleFormatHidesOwner: a *Handle, alone or in a struct, prints its
// owner as the fingerprint for every verb, never the id.
func TestHandleFormatHidesOwner(t *testing.T) {
	t.Parallel()
	s := newSession(t, memory.New(nil), nil)
	h, err := s.Lock(t.Context(), "jobs/h", nil)
	if err != nil {
		t.Fatal(err)
	}
	owner := h.Lease().Owner
	for _, v := range []any{h, struct{ H *fence.Handle }{h}, []*fence.Handle{h}} {
		for _, f := range formats {
			got := f.f(v)
			for _, hd := range hidden(owner) {
				if strings.Contains(got, hd) {
					t.Errorf("%s of %T printed the owner id: %s", f.name, v, got)
				}
			}
			if f.name == "%v" && !strings.Contains(got, fence.OwnerFingerprint(owner)) {
				t.Errorf("%%v of %T = %s, without the fingerprint", v, got)
			}
		}
	}
}
