package election_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
)

func TestNewRejects(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	tests := []struct {
		name   string
		locker fence.Locker
		key    string
		opts   *election.Options
		field  string
	}{
		{"nil locker", nil, "k", nil, "locker"},
		{"empty key", store, "", nil, "key"},
		{"negative TTL", store, "k", &election.Options{TTL: -time.Second}, "TTL"},
		{"negative retry", store, "k", &election.Options{RetryInterval: -time.Second}, "RetryInterval"},
		{"negative holdoff", store, "k", &election.Options{Holdoff: -time.Second}, "Holdoff"},
		{"TTL too short for a retry interval", store, "k", &election.Options{TTL: 2}, "RetryInterval"},
		{"guard TTL", store, "k", &election.Options{Guard: guard.Options{TTL: time.Second}}, "Guard.TTL"},
		{"guard clock", store, "k", &election.Options{Guard: guard.Options{Clock: clocktest.New(epoch)}}, "Guard.Clock"},
		{"guard acquire timeout", store, "k", &election.Options{Guard: guard.Options{AcquireTimeout: time.Second}}, "Guard.AcquireTimeout"},
		{"guard renew interval over TTL/2", store, "k", &election.Options{TTL: time.Second, Guard: guard.Options{RenewInterval: time.Second}}, "RenewInterval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := election.New(tt.locker, tt.key, tt.opts)
			var inv *fence.InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field || c != nil {
				t.Fatalf("New: %v, %v; want an InvalidError on %s", c, err, tt.field)
			}
		})
	}
}
