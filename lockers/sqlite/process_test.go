package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/lockers/sqlite" // sqlite://
)

// The environment of a child process of the tests below: its mode, the
// store's URL, the key, and the directory of the shared files.
const (
	childEnv    = "FENCE_SQLITE_TEST_CHILD" // "contend" or "hold"
	childURL    = "FENCE_SQLITE_TEST_URL"
	childDir    = "FENCE_SQLITE_TEST_DIR"
	childRounds = 5
)

// child is the main of a child process: it contends for key "k" in
// childRounds rounds ("contend") or takes it and holds it until killed
// ("hold"), and returns its exit status.
func child() int {
	ctx := context.Background()
	l, err := fence.OpenLocker(ctx, os.Getenv(childURL), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: 2 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sess.Close(ctx)
	if os.Getenv(childEnv) == "hold" {
		h, err := sess.Lock(ctx, "k", &fence.LockOptions{Wait: fence.WaitForever})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("held %d\n", h.Token())
		<-h.Done() // until killed
		return 1
	}
	dir := os.Getenv(childDir)
	for range childRounds {
		h, err := sess.Lock(ctx, "k", &fence.LockOptions{Wait: fence.WaitForever})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := critical(dir, h.Token()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := h.Release(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// critical is the work under the lease: it makes the file "holder",
// which must not exist (another holder would have it), appends token to
// the file "tokens", and removes "holder".
func critical(dir string, token fence.Token) error {
	holder := dir + "/holder"
	f, err := os.OpenFile(holder, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("two holders at once: %w", err)
	}
	_ = f.Close()
	log, err := os.OpenFile(dir+"/tokens", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(log, token)
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Millisecond) // let the others try meanwhile
	return os.Remove(holder)
}

// startChild starts this test binary as a child process in mode.
func startChild(t *testing.T, mode, url, dir string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childURL+"="+url, childDir+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestProcesses: several processes contend for one key on one file, each
// taking it childRounds times; no two hold it at once, and the tokens,
// in the order the holders worked, strictly increase.
func TestProcesses(t *testing.T) {
	t.Parallel()
	const procs = 4
	dir := t.TempDir()
	url := fileURL(t)
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmds[i] = startChild(t, "contend", url, dir)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(dir + "/tokens")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != procs*childRounds {
		t.Errorf("%d leases worked under; want %d", len(lines), procs*childRounds)
	}
	last := 0
	for _, line := range lines {
		n, err := strconv.Atoi(line)
		if err != nil || n <= last {
			t.Fatalf("the tokens in the order the holders worked are %v; want them strictly increasing", lines)
		}
		last = n
	}
}

// TestKilledHolderIsTakenOver: a process holding the key is killed
// (SIGKILL: it releases nothing); a contender that waits gets the key once
// the holder's last renewal has run out, with a higher token, and not
// before the kill.
func TestKilledHolderIsTakenOver(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	holder := startChild(t, "hold", url, t.TempDir())
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the holder said %q: %v", line, err)
	}
	held, err := fence.ParseToken(strings.TrimSpace(strings.TrimPrefix(line, "held ")))
	if err != nil {
		t.Fatal(err)
	}

	l := open(t, url, nil)
	if _, err := l.Acquire(t.Context(), "k", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire while the holder lives = %v; want fence.ErrHeld", err)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound on a broken run
	defer cancel()
	h, err := sess.Lock(ctx, "k", &fence.LockOptions{Wait: fence.WaitForever})
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	if h.Token() <= held {
		t.Errorf("the new holder's token %d is not above the killed holder's %d", h.Token(), held)
	}
	if err := h.Release(t.Context()); err != nil {
		t.Error(err)
	}
}
