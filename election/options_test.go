package election_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/lockers/memory"
)

func TestNewRejects(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	sess := newSession(t, store, nil)
	// A session whose TTL is too short for a default retry interval:
	// the other settings are as short as a session allows.
	tiny := newSession(t, store, &fence.SessionOptions{TTL: 2, RenewInterval: 1, PollInterval: 1, CallTimeout: 1})
	tests := []struct {
		name  string
		s     *fence.Session
		key   string
		opts  *election.Options
		field string
	}{
		{"nil session", nil, "k", nil, "session"},
		{"empty key", sess, "", nil, "key"},
		{"negative retry", sess, "k", &election.Options{RetryInterval: -time.Second}, "RetryInterval"},
		{"negative holdoff", sess, "k", &election.Options{Holdoff: -time.Second}, "Holdoff"},
		{"TTL too short for a retry interval", tiny, "k", nil, "RetryInterval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := election.New(tt.s, tt.key, tt.opts)
			var inv *fence.InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field || c != nil {
				t.Fatalf("New: %v, %v; want an InvalidError on %s", c, err, tt.field)
			}
		})
	}
}
