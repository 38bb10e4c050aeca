package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

func TestStatusOf(t *testing.T) {
	t.Parallel()
	lost := &fence.LeaseLostError{Key: "k", Token: 3, Err: fence.ErrNotHeld}
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{usagef("bad"), exitUsage},
		{&fence.InvalidError{Field: "ttl", Reason: "too long"}, exitUsage},
		{fmt.Errorf("guard: %w", &fence.HeldError{Key: "k"}), exitBusy},
		{lost, exitLost},
		{errors.Join(&exitError{code: 3}, lost), exitLost},
		{&fence.CorruptError{Key: "k", Reason: "token"}, exitStore},
		{errors.New("connection refused"), exitStore},
	}
	for _, tt := range tests {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestLostMessage: the reasons of a lost lease are told without owner ids.
func TestLostMessage(t *testing.T) {
	t.Parallel()
	const other = "0b6e1a52-9c43-4d6b-8f0e-3f1d2a7c9e11"
	lease := fence.Lease{Key: "k", Owner: fence.NewOwnerID(), Token: 4}
	tests := []struct {
		reason error
		want   string
	}{
		{&fence.ReconcileError{Lease: lease, Found: fence.LockInfo{Key: "k", Held: true, Owner: other, Token: 5}, RenewErr: errors.New("timeout")}, "held by another owner with token 5"},
		{&fence.ReconcileError{Lease: lease, Found: fence.LockInfo{Key: "k", Owner: other, Token: 4}, RenewErr: errors.New("timeout")}, "free"},
		{fmt.Errorf("renew: %w", fence.ErrNotHeld), "no longer ours"},
		{&fence.DeadlineError{Err: errors.New("connection refused")}, "connection refused"},
	}
	for _, tt := range tests {
		msg := lostMessage(&fence.LeaseLostError{Key: "k", Token: 4, Err: tt.reason})
		if !strings.Contains(msg, tt.want) || !strings.Contains(msg, `lease on "k" (token 4) lost`) {
			t.Errorf("lostMessage(%v) = %q, want it to say %q", tt.reason, msg, tt.want)
		}
		if strings.Contains(msg, other) || strings.Contains(msg, lease.Owner) {
			t.Errorf("lostMessage(%v) = %q names an owner", tt.reason, msg)
		}
	}
}
