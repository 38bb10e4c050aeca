package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fencekit/fence"
)

// TestRunExportsLease: the command sees the lease in its environment,
// fence exits with the command's status, and the lease is released.
func TestRunExportsLease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		dir := t.TempDir()
		out := filepath.Join(dir, "env")
		script := `printf '%s\n%s\n%s\n' "$FENCE_KEY" "$FENCE_TOKEN" "$FENCE_OWNER" > ` + shellQuote(out) + `; exit 7`
		r := fenceRun(t, nil, "run", "--ttl", b.ttl, "--store", store, "jobs/nightly", "--", "sh", "-c", script)
		wantCode(t, r, 7)
		if strings.Contains(r.stderr, "fence:") {
			t.Errorf("fence spoke about a command that just exited 7: %v", r)
		}
		lines := readLines(t, out)
		if len(lines) != 3 || lines[0] != "jobs/nightly" || lines[2] == "" {
			t.Fatalf("command saw FENCE_KEY, FENCE_TOKEN, FENCE_OWNER = %q", lines)
		}
		s := inspectJSON(t, store, "jobs/nightly")
		if s.Held || s.Token.String() != lines[1] || s.Owner != fence.OwnerFingerprint(lines[2]) {
			t.Errorf("after the run inspect shows %+v; want free, token %s, last owner %s", s, lines[1], fence.OwnerFingerprint(lines[2]))
		}

		// A second run gets a higher token, and a zero status passes.
		r = fenceRun(t, nil, "run", "--ttl", b.ttl, "--store", store, "jobs/nightly", "sh", "-c", `echo "$FENCE_TOKEN" > `+shellQuote(out))
		wantCode(t, r, 0)
		if got := readToken(t, out); got <= s.Token {
			t.Errorf("second run got token %d, not above %d", got, s.Token)
		}
	})
}

// TestRunCommandStatuses: a missing command is 127, one that cannot be
// executed 126, one killed by a signal 128+N.
func TestRunCommandStatuses(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		testCommandStatuses(t, b, store)
	})
}

func testCommandStatuses(t *testing.T, b backend, store string) {
	tests := []struct {
		name    string
		command []string
		code    int
		stderr  string
	}{
		{"not found", []string{"fence-no-such-command"}, exitNotFound, "not found"},
		{"not executable", []string{os.DevNull}, exitCannotRun, "cannot run"},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, exitSignal + int(syscall.SIGTERM), ""},
		{"exit 0", []string{"true"}, 0, ""},
		{"exit 1", []string{"false"}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := uniqueName("status-")
			r := fenceRun(t, nil, append([]string{"run", "--ttl", b.ttl, "--store", store, key, "--"}, tt.command...)...)
			wantCode(t, r, tt.code)
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q: %v", tt.stderr, r)
			}
			if s := inspectJSON(t, store, key); s.Held || !s.Token.Valid() {
				t.Errorf("after the run inspect shows %+v; want a released lease", s)
			}
		})
	}
}

// holder runs fence with a command that holds the lease until the test
// creates its release file.
type holder struct {
	p                  *proc
	started, release   string
	tokenFile, termLog string
}

// startHolder starts `fence run` on key with a command that writes its
// token, then waits for the release file (or SIGTERM, which it logs and
// answers with exit 3). It returns once the command runs.
func startHolder(t *testing.T, b backend, store, key string, extra ...string) *holder {
	t.Helper()
	dir := t.TempDir()
	h := &holder{
		started:   filepath.Join(dir, "started"),
		release:   filepath.Join(dir, "release"),
		tokenFile: filepath.Join(dir, "token"),
		termLog:   filepath.Join(dir, "term"),
	}
	script := `trap 'echo TERM > ` + shellQuote(h.termLog) + `; exit 3' TERM
echo "$FENCE_TOKEN" > ` + shellQuote(h.tokenFile) + `
touch ` + shellQuote(h.started) + `
while [ ! -e ` + shellQuote(h.release) + ` ]; do sleep 0.02; done`
	args := append([]string{"run", "--ttl", b.ttl}, extra...)
	args = append(args, "--store", store, key, "--", "sh", "-c", script)
	h.p = startFence(t, nil, args...)
	waitFor(t, "the holder's command to start", func() bool {
		select {
		case <-h.p.done:
			t.Fatalf("holder exited early: %v", h.p.res)
		default:
		}
		return exists(h.started)
	})
	return h
}

// finish lets the holder's command exit and returns fence's result.
func (h *holder) finish(t *testing.T) result {
	t.Helper()
	if err := os.WriteFile(h.release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return h.p.wait()
}

// TestNoWaitBusy: --no-wait on a held key exits 75 without running the
// command, and leaves the holder alone.
func TestNoWaitBusy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		h := startHolder(t, b, store, "busy")
		ran := filepath.Join(t.TempDir(), "ran")
		for _, mode := range [][]string{{"--no-wait"}, nil} { // --no-wait is the default
			args := append([]string{"run", "--ttl", b.ttl}, mode...)
			r := fenceRun(t, nil, append(args, "--store", store, "busy", "--", "touch", ran)...)
			wantCode(t, r, exitBusy)
			if !strings.Contains(r.stderr, "held by another owner") || !strings.Contains(r.stderr, "did not run") {
				t.Errorf("busy run's stderr does not say why: %v", r)
			}
		}
		if exists(ran) {
			t.Error("the command ran although the key was held")
		}
		s := inspectJSON(t, store, "busy")
		if tok := readToken(t, h.tokenFile); !s.Held || s.Token != tok {
			t.Errorf("inspect shows %+v; want held with the holder's token %d", s, tok)
		}
		wantCode(t, h.finish(t), 0)
	})
}

// TestWaitAcquiresAfterHolder: --wait retries while the key is held and
// runs the command once the holder is done, with a higher token.
func TestWaitAcquiresAfterHolder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		h := startHolder(t, b, store, "queue")
		out := filepath.Join(t.TempDir(), "token")
		w := startFence(t, nil, "run", "-v", "--wait", "50s", "--ttl", b.ttl, "--store", store, "queue",
			"--", "sh", "-c", `echo "$FENCE_TOKEN" > `+shellQuote(out))
		waitFor(t, "the waiter to find the key busy", func() bool { return strings.Contains(w.stderr.String(), "is busy") })
		if exists(out) {
			t.Fatal("the waiter ran its command while the holder held the key")
		}
		wantCode(t, h.finish(t), 0)
		wantCode(t, w.wait(), 0)
		if got, held := readToken(t, out), readToken(t, h.tokenFile); got <= held {
			t.Errorf("waiter got token %d, not above the holder's %d", got, held)
		}
	})
}

// TestSignalsForwarded: SIGTERM sent to fence reaches the command, fence
// exits with the command's status and releases the lease.
func TestSignalsForwarded(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		h := startHolder(t, b, store, "signalled")
		if err := h.p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		r := h.p.wait()
		wantCode(t, r, 3) // the command's trap exits 3
		if !exists(h.termLog) {
			t.Error("the command did not get SIGTERM")
		}
		if s := inspectJSON(t, store, "signalled"); s.Held {
			t.Errorf("after the command exited the key is still held: %+v", s)
		}
	})
}

// TestInterruptWhileWaiting: a signal while fence waits for the lock ends
// the wait with 128+N, and the command never runs.
func TestInterruptWhileWaiting(t *testing.T) {
	t.Parallel()
	b := backends()[0]
	store := b.store(t)
	h := startHolder(t, b, store, "interrupted")
	ran := filepath.Join(t.TempDir(), "ran")
	w := startFence(t, nil, "run", "-v", "--wait", "50s", "--ttl", b.ttl, "--store", store, "interrupted", "--", "touch", ran)
	waitFor(t, "the waiter to find the key busy", func() bool { return strings.Contains(w.stderr.String(), "is busy") })
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := w.wait()
	wantCode(t, r, exitSignal+int(syscall.SIGINT))
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("stderr does not say it was interrupted: %v", r)
	}
	if exists(ran) {
		t.Error("the command ran after the wait was interrupted")
	}
	wantCode(t, h.finish(t), 0)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestCrashedHolderClockFree: on the clock-free stores, after the holder
// was killed with its lease, a --no-wait run exits 75 and says that only
// a run waiting longer than the TTL takes the key over; such a run does.
// On a store whose leases expire by a clock, the busy message gives no
// such hint.
func TestCrashedHolderClockFree(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		b := backendNamed(t, "postgres")
		store := b.store(t)
		h := startHolder(t, b, store, "held")
		r := fenceRun(t, nil, "run", "--no-wait", "--ttl", b.ttl, "--store", store, "held", "--", "true")
		wantCode(t, r, exitBusy)
		if strings.Contains(r.stderr, "clock-free") {
			t.Errorf("a store with expiry by its own clock is called clock-free: %v", r)
		}
		wantCode(t, h.finish(t), 0)
	})
	for _, name := range []string{"dynamo-clock-free", "gcs-clock-free", "s3-clock-free", "nats"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := backendNamed(t, name)
			store := b.store(t)
			h := startHolder(t, b, store, "crash")
			if err := h.p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			h.p.wait()
			r := fenceRun(t, nil, "run", "--no-wait", "--ttl", b.ttl, "--store", store, "crash", "--", "true")
			wantCode(t, r, exitBusy)
			for _, want := range []string{"held by another owner", "clock-free", "taken over only by a run that waits longer than its TTL", "--wait "} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q: %v", want, r)
				}
			}
			if strings.Contains(r.stderr, " until ") {
				t.Errorf("stderr says the key is held until a time, as if it freed itself then: %v", r)
			}
			wait := 3 * b.minTTL
			wantCode(t, fenceRun(t, nil, "run", "--wait", wait.String(), "--ttl", b.ttl, "--store", store, "crash", "--", "true"), 0)
		})
	}
}
