package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// defaultEnv is an environment without a store, whose default store is
// under home (HOME), or under state when it is not "" (XDG_STATE_HOME).
func defaultEnv(home, state string) []string {
	env := append(envWithout(EnvStore, "HOME", "XDG_STATE_HOME"), "HOME="+home)
	if state != "" {
		env = append(env, "XDG_STATE_HOME="+state)
	}
	return env
}

// TestDefaultStore: with no store configured, fence run works on a fresh
// machine (a new HOME) with the SQLite file in the state directory,
// which it makes with mode 0700; a second run gets a higher token; fence
// inspect, break and init use the same file.
func TestDefaultStore(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := defaultEnv(home, "")
	dir := t.TempDir()
	var tokens []fence.Token
	for i := range 2 {
		out := filepath.Join(dir, "token"+string(rune('a'+i)))
		r := fenceRun(t, env, "run", "nightly", "--", "sh", "-c", `echo "$FENCE_TOKEN" > `+shellQuote(out))
		wantCode(t, r, 0)
		tokens = append(tokens, readToken(t, out))
	}
	if tokens[1] <= tokens[0] {
		t.Errorf("the second run's token %d is not above the first's %d", tokens[1], tokens[0])
	}
	state := filepath.Join(home, ".local", "state", "fence")
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the state directory %s: %v, %v; want mode 0700", state, fi, err)
	}
	if _, err := os.Stat(filepath.Join(state, "locks.db")); err != nil {
		t.Errorf("the default store: %v", err)
	}

	r := fenceRun(t, env, "inspect", "nightly")
	wantCode(t, r, 0)
	if !strings.Contains(r.stdout, "token") || !strings.Contains(r.stdout, tokens[1].String()) {
		t.Errorf("fence inspect on the default store does not show token %d: %v", tokens[1], r)
	}
	wantCode(t, fenceRun(t, env, "break", "nightly"), 0)
	wantCode(t, fenceRun(t, env, "init"), 0)
}

// TestDefaultStoreXDG: XDG_STATE_HOME, when absolute, holds the default
// store instead of HOME.
func TestDefaultStoreXDG(t *testing.T) {
	t.Parallel()
	home, state := t.TempDir(), t.TempDir()
	wantCode(t, fenceRun(t, defaultEnv(home, state), "run", "k", "--", "true"), 0)
	if _, err := os.Stat(filepath.Join(state, "fence", "locks.db")); err != nil {
		t.Errorf("the default store under XDG_STATE_HOME: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); err == nil {
		t.Errorf("fence made %s/.local although XDG_STATE_HOME is set", home)
	}
}

// TestNoDefaultStore: without HOME or XDG_STATE_HOME there is no default
// store: bad usage, saying what to set, with the store URL forms.
func TestNoDefaultStore(t *testing.T) {
	t.Parallel()
	env := envWithout(EnvStore, "HOME", "XDG_STATE_HOME")
	r := fenceRun(t, env, "inspect", "k")
	wantCode(t, r, exitUsage)
	for _, want := range []string{"no store", "--store URL", "HOME", "forms: " + strings.Join(lockerForms(), ", ")} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %v", want, r)
		}
	}
}

// TestDefaultStoreExcludes: two fence runs on the default store exclude
// each other. While the first one's command runs, a second with
// --no-wait exits 75 without running its command, and a second that
// waits runs its command only after the first one's ended, with a
// higher token.
func TestDefaultStoreExcludes(t *testing.T) {
	t.Parallel()
	env := defaultEnv(t.TempDir(), "")
	dir := t.TempDir()
	running, goOn, tokA, tokB := filepath.Join(dir, "a-running"), filepath.Join(dir, "a-go"), filepath.Join(dir, "a-token"), filepath.Join(dir, "b-token")
	a := startFence(t, env, "run", "job", "--", "sh", "-c",
		`echo "$FENCE_TOKEN" > `+shellQuote(tokA)+`; touch `+shellQuote(running)+
			`; while [ ! -e `+shellQuote(goOn)+` ]; do sleep 0.05; done; rm `+shellQuote(running))
	waitFor(t, "the first run's command", func() bool { return exists(running) })

	r := fenceRun(t, env, "run", "--no-wait", "job", "--", "touch", filepath.Join(dir, "b-ran"))
	wantCode(t, r, exitBusy)
	if exists(filepath.Join(dir, "b-ran")) {
		t.Error("the busy run ran its command")
	}
	// The waiting run's command fails if the first one's still runs.
	b := startFence(t, env, "run", "--wait", "50s", "job", "--", "sh", "-c",
		`[ ! -e `+shellQuote(running)+` ] && echo "$FENCE_TOKEN" > `+shellQuote(tokB))
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wantCode(t, a.wait(), 0)
	wantCode(t, b.wait(), 0)
	if ta, tb := readToken(t, tokA), readToken(t, tokB); tb <= ta {
		t.Errorf("the waiting run's token %d is not above the first run's %d", tb, ta)
	}
}

// TestSchemesTheCommandNames: the default store's scheme is registered,
// and the schemes the command refuses as in-process open stores that
// are.
func TestSchemesTheCommandNames(t *testing.T) {
	t.Parallel()
	schemes, _ := driver.LockerSchemes()
	if !slices.Contains(schemes, defaultScheme) {
		t.Errorf("the default store's scheme %q is not registered: %v", defaultScheme, schemes)
	}
	for _, s := range inProcessSchemes {
		l, err := fence.OpenLocker(t.Context(), s+"://", nil)
		if err != nil {
			t.Errorf("open %s://: %v", s, err)
			continue
		}
		if !driver.InfoOf(l).InProcess {
			t.Errorf("%s:// is listed as in-process, but its locker is not", s)
		}
		_ = l.Close()
	}
}
