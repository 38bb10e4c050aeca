package fenceotel

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

func TestSafeError(t *testing.T) {
	t.Parallel()
	base := errors.New("store: timeout")
	tests := []struct {
		name   string
		err    error
		owners []string
		want   string   // a substring of the result
		absent []string // never in the result
	}{
		{name: "nil", err: nil},
		{name: "plain", err: base, want: "store: timeout"},
		{name: "given owner", err: fmt.Errorf("lease of worker-7 lost: %w", base), owners: []string{"worker-7"},
			want: "lease of [redacted] lost", absent: []string{"worker-7"}},
		{name: "uuid", err: errors.New("lease id 0F1E2D3C-4B5A-4978-8a6b-5c4d3e2f1a0b refused"),
			want: "lease id [redacted] refused", absent: []string{"0F1E2D3C"}},
		{name: "URL password", err: errors.New("dial postgres://app:s3cr%40t@db:5432/x failed"),
			want: "postgres://app:[redacted]@db:5432/x", absent: []string{"s3cr"}},
		{name: "DSN password", err: errors.New("connect host=db user=app password=s3cret dbname=x"),
			want: "password=[redacted] dbname=x", absent: []string{"s3cret"}},
		{name: "quoted DSN password", err: errors.New("connect password='a b c' host=db"),
			want: "password=[redacted] host=db", absent: []string{"a b c"}},
		{name: "held by a named owner", err: &fence.HeldError{Key: "k", Owner: "job-runner-3", Token: 4},
			want: `lock "k" held by another owner (token 4)`, absent: []string{"job-runner-3"}},
		{name: "reconcile names the other owner",
			err: &fence.LeaseLostError{Key: "k", Token: 3, Err: &fence.ReconcileError{
				Lease:    fence.Lease{Key: "k", Owner: "mine-1", Token: 3},
				Found:    fence.LockInfo{Key: "k", Held: true, Owner: "theirs-2", Token: 4},
				RenewErr: base,
			}},
			want:   `lease on "k" (token 3) lost: fence: after an ambiguous renewal (store: timeout) the lock "k" is held by another owner with token 4`,
			absent: []string{"theirs-2", "mine-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := safeError(tc.err, tc.owners...)
			if tc.err == nil && got != "" {
				t.Errorf("safeError(nil) = %q", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("safeError = %q, want it to contain %q", got, tc.want)
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("safeError = %q carries %q", got, a)
				}
			}
		})
	}
}

// safeError describes a *fence.ReconcileError from its fields, in the
// words of its own Error method: with nothing to redact the two agree.
func TestSafeReconcileMatchesError(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{true, false} {
		rec := &fence.ReconcileError{
			Lease:    fence.Lease{Key: "k", Token: 3},
			Found:    fence.LockInfo{Key: "k", Held: held, Token: 4},
			RenewErr: errors.New("store: timeout"),
		}
		if got, want := safeError(rec), rec.Error(); got != want {
			t.Errorf("held %v: safeError = %q, want the error's own text %q", held, got, want)
		}
	}
}

func TestLostReason(t *testing.T) {
	t.Parallel()
	lost := func(reason error) error { return &fence.LeaseLostError{Key: "k", Token: 1, Err: reason} }
	tests := []struct {
		cause error
		want  string
	}{
		{lost(fence.ErrNotHeld), reasonNotHeld},
		{lost(&fence.DeadlineError{Err: errors.New("timeout")}), reasonDeadline},
		{lost(&fence.ReconcileError{RenewErr: errors.New("timeout")}), reasonReconcile},
		{lost(&fence.CorruptError{Key: "k", Reason: "bad"}), reasonError},
		{lost(&fence.InvalidError{Field: "ttl", Reason: "bad"}), reasonError},
	}
	for _, tc := range tests {
		if got := lostReason(tc.cause); got != tc.want {
			t.Errorf("lostReason(%v) = %q, want %q", tc.cause, got, tc.want)
		}
	}
}

// FuzzSafeError: redaction never panics and never leaves a given owner id
// in the text.
func FuzzSafeError(f *testing.F) {
	f.Add("lease 0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b gone", "w-1")
	f.Add("postgres://u:p@h/db password=x", "")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, text, owner string) {
		got := safeError(errors.New(text), owner)
		// The marker could form an owner id made of its own letters or
		// brackets anew; real owner ids have no brackets.
		if owner != "" && !strings.ContainsAny(owner, "[]") && !strings.Contains(redacted, owner) && strings.Contains(got, owner) {
			t.Errorf("safeError(%q, %q) = %q still carries the owner", text, owner, got)
		}
	})
}
