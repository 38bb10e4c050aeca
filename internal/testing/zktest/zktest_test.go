package zktest

import (
	"testing"
)

// TestEnsemble starts three servers, finds one leader, kills it, and sees
// another one lead; the killed server serves again after its restart.
func TestEnsemble(t *testing.T) {
	t.Parallel()
	e := StartEnsemble(t, 3)
	old := e.Leader(t)
	e.Kill(t, old)
	now := e.Leader(t)
	if now == old {
		t.Fatalf("server %d still leads after its kill", old)
	}
	e.Restart(t, old)
	if m := mode(e.Server(old)); m != "follower" && m != "leader" {
		t.Fatalf("restarted server %d is in mode %q", old, m)
	}
}
