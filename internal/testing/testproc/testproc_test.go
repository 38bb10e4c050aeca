package testproc

import (
	"testing"
	"time"
)

func TestKillAndRestart(t *testing.T) {
	p := Start(t, "sleeper", "/bin/sh", "-c", "echo started; exec sleep 60")
	p.WaitLog(t.Context(), "started", 5*time.Second)
	if !p.Running() {
		t.Fatal("not running after Start")
	}
	p.Kill()
	if p.Running() {
		t.Fatal("running after Kill")
	}
	p.Restart()
	if !p.Running() {
		t.Fatal("not running after Restart")
	}
	p.Stop()
	if p.Running() {
		t.Fatal("running after Stop")
	}
}
