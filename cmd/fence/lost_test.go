package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLeaseLostTerm: `fence break` from another process while the command
// runs makes fence send SIGTERM to the command and exit 79; the next lease
// gets a higher token.
func TestLeaseLostTerm(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		h := startHolder(t, b, store, "lost", "--grace", "30s")
		broken := readToken(t, h.tokenFile)
		wantCode(t, fenceRun(t, nil, "break", "--store", store, "lost"), 0)
		r := h.p.wait()
		wantCode(t, r, exitLost)
		if !exists(h.termLog) {
			t.Error("the command did not get SIGTERM")
		}
		for _, want := range []string{"lease on \"lost\"", "lost", "SIGTERM", "exited with status 3"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q: %v", want, r)
			}
		}
		if strings.Contains(r.stderr, "SIGKILL") {
			t.Errorf("the command exited on SIGTERM, yet fence speaks of SIGKILL: %v", r)
		}
		if n := strings.Count(r.stderr, `lease on "lost"`); n != 1 {
			t.Errorf("the lost lease is reported %d times, want once: %v", n, r)
		}
		out := filepath.Join(t.TempDir(), "token")
		wantCode(t, fenceRun(t, nil, "run", "--ttl", b.ttl, "--store", store, "lost", "--", "sh", "-c", `echo "$FENCE_TOKEN" > `+shellQuote(out)), 0)
		if next := readToken(t, out); next <= broken {
			t.Errorf("after break the next token is %d, not above the broken %d", next, broken)
		}
	})
}

// TestLeaseLostKill: a command that ignores SIGTERM gets SIGKILL after the
// grace period, and fence still exits 79.
func TestLeaseLostKill(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		dir := t.TempDir()
		started := filepath.Join(dir, "started")
		// The shell and its sleep both ignore SIGTERM (an ignored signal
		// stays ignored across exec); the sleep outlasts callTimeout.
		script := `trap '' TERM; touch ` + shellQuote(started) + `; sleep 600`
		p := startFence(t, nil, "run", "--ttl", b.ttl, "--grace", "200ms", "--store", store, "stubborn", "--", "sh", "-c", script)
		waitFor(t, "the command to start", func() bool { return exists(started) })
		wantCode(t, fenceRun(t, nil, "break", "--store", store, "stubborn"), 0)
		r := p.wait()
		wantCode(t, r, exitLost)
		for _, want := range []string{"sending SIGTERM", "sending SIGKILL", "was killed by SIGKILL"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q: %v", want, r)
			}
		}
	})
}

// TestBreakOutput: break prints the state after the break, in text and
// JSON; inspect shows a held key with its holder.
func TestBreakOutput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		// A key never acquired: free, token 0; breaking it is no error.
		r := fenceRun(t, nil, "inspect", "--store", store, "never")
		wantCode(t, r, 0)
		if !strings.Contains(r.stdout, "free") || !strings.Contains(r.stdout, "never acquired") {
			t.Errorf("inspect of an unknown key: %v", r)
		}
		r = fenceRun(t, nil, "break", "--json", "--store", store, "never")
		wantCode(t, r, 0)
		var s state
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Held || s.Token != 0 || s.Key != "never" {
			t.Errorf("break --json of an unknown key printed %q (%v)", r.stdout, err)
		}

		h := startHolder(t, b, store, "held", "--grace", "30s")
		tok := readToken(t, h.tokenFile)
		r = fenceRun(t, nil, "inspect", "--store", store, "held")
		wantCode(t, r, 0)
		for _, want := range []string{"state:   held", "token:   " + tok.String(), "holder:"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("inspect of a held key lacks %q: %v", want, r)
			}
		}
		if s := inspectJSON(t, store, "held"); !s.Held || s.Token != tok || s.Owner == "" {
			t.Errorf("inspect --json of a held key: %+v, want held with token %d and an owner", s, tok)
		}

		r = fenceRun(t, nil, "break", "--store", store, "held")
		wantCode(t, r, 0)
		for _, want := range []string{`broke "held"`, "state:   free", "token:   " + tok.String(), "above " + tok.String()} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("break output lacks %q: %v", want, r)
			}
		}
		wantCode(t, h.p.wait(), exitLost)
		if s := inspectJSON(t, store, "held"); s.Held || s.Token != tok {
			t.Errorf("after break and the holder's exit inspect shows %+v; want free with token %d", s, tok)
		}
	})
}

// TestLeaseLostKillsGroup: after a lost lease, a process the command
// started that ignores SIGTERM is killed with the group after the grace
// period, although the command itself exited on SIGTERM; fence exits
// only once the group is gone.
func TestLeaseLostKillsGroup(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		dir := t.TempDir()
		inner, pidFile := filepath.Join(dir, "inner.sh"), filepath.Join(dir, "pid")
		// The inner shell writes its pid, then execs a sleep that ignores
		// SIGTERM, holding none of fence's pipes; the outer shell dies on
		// SIGTERM in its wait.
		script := `trap "" TERM; echo $$ > ` + shellQuote(pidFile) + `.tmp; mv ` + shellQuote(pidFile) + `.tmp ` + shellQuote(pidFile) + `; exec sleep 30 >/dev/null 2>&1 </dev/null`
		if err := os.WriteFile(inner, []byte(script+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		const grace = time.Second
		p := startFence(t, nil, "run", "--ttl", b.ttl, "--grace", grace.String(), "--store", store, "tree",
			"--", "sh", "-c", "sh "+shellQuote(inner)+" & wait")
		waitFor(t, "the inner process to start", func() bool { return exists(pidFile) })
		b2, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b2)))
		if err != nil {
			t.Fatalf("inner pid %q: %v", b2, err)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		wantCode(t, fenceRun(t, nil, "break", "--store", store, "tree"), 0)
		r := p.wait()
		wantCode(t, r, exitLost)
		if !strings.Contains(r.stderr, "sending SIGKILL to the group") {
			t.Errorf("stderr does not say the group got SIGKILL: %v", r)
		}
		// fence exits once the group is gone; a margin for the reaping of
		// the orphaned inner process.
		deadline := time.Now().Add(2 * time.Second)
		for processAlive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the inner process %d, which ignores SIGTERM, still runs after fence exited: %v", pid, r)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// processAlive reports whether process pid exists and is not a zombie.
func processAlive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // no /proc: alive
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
