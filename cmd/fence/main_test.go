package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// fenceBin is the fence binary built by TestMain.
var fenceBin string

// stateHome is the XDG_STATE_HOME of every run of the binary whose test
// gives no environment of its own (testEnv): a directory of TestMain's,
// so that no test touches the user's default store.
var stateHome string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	// The binary reads Azure credentials from the SDK's environment only:
	// point it at Azurite when scripts/emulators.sh started it.
	if cs := os.Getenv("FENCE_AZURITE_CONNECTION_STRING"); cs != "" && os.Getenv("AZURE_STORAGE_CONNECTION_STRING") == "" {
		os.Setenv("AZURE_STORAGE_CONNECTION_STRING", cs)
	}
	dir, err := os.MkdirTemp("", "fence-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	fenceBin = filepath.Join(dir, "fence")
	stateHome = filepath.Join(dir, "state")
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(gocmd, "build", "-o", fenceBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the fence binary:", err)
		return 1
	}
	return m.Run()
}

// callTimeout bounds every run of the binary; no test expects to come near
// it.
const callTimeout = 60 * time.Second

// result is what one run of the binary printed and its exit status.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// testEnv is the environment of the binary: the test's own, without
// $FENCE_STORE, with the default store in stateHome, plus extra.
func testEnv(extra ...string) []string {
	return append(envWithout(EnvStore, "XDG_STATE_HOME"), append([]string{"XDG_STATE_HOME=" + stateHome}, extra...)...)
}

// envWithout is the test's environment without the variables names.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			env = append(env, kv)
		}
	}
	return env
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a run of the binary in the background.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	res            result
}

// startFence starts the binary with args and env (nil: testEnv()).
func startFence(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	if env == nil {
		env = testEnv()
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	cmd := exec.CommandContext(ctx, fenceBin, args...)
	cmd.Env = env
	p := &proc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start fence: %v", err)
	}
	go func() {
		defer cancel()
		defer close(p.done)
		err := cmd.Wait()
		p.res = result{stdout: p.stdout.String(), stderr: p.stderr.String(), code: cmd.ProcessState.ExitCode()}
		if ctx.Err() != nil {
			p.res.stderr += fmt.Sprintf("\n[test: killed after %v]", callTimeout)
		} else if errors.Is(err, exec.ErrWaitDelay) {
			p.res.stderr += "\n[test: output still open]"
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the run to end and returns its result.
func (p *proc) wait() result {
	<-p.done
	return p.res
}

// fenceRun runs the binary to the end.
func fenceRun(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return startFence(t, env, args...).wait()
}

// waitFor polls cond until it holds, failing the test if it does not
// within callTimeout: a bound on a broken run, not a timed assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended while waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readToken reads a token that a command wrote to path.
func readToken(t *testing.T, path string) fence.Token {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	tok, err := fence.ParseToken(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("token written by the command: %v", err)
	}
	return tok
}

// wantCode fails the test unless r exited with code.
func wantCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %v", code, r)
	}
}

// inspectJSON runs fence inspect --json and decodes its output.
func inspectJSON(t *testing.T, store, key string) state {
	t.Helper()
	r := fenceRun(t, nil, "inspect", "--json", "--store", store, key)
	wantCode(t, r, 0)
	var s state
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("inspect --json printed %q: %v", r.stdout, err)
	}
	return s
}

// uniqueName returns prefix followed by random lower-case letters and
// digits.
func uniqueName(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:12])
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
