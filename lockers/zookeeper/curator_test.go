package zookeeper

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// curator is a Java process holding an Apache Curator InterProcessMutex
// (testdata/CuratorLock.java) on one path.
type curator struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan string
}

// startCurator compiles testdata/CuratorLock.java into a temporary
// directory and runs it on servers and path; the process is killed when
// the test ends.
func startCurator(t *testing.T, servers, path string) *curator {
	t.Helper()
	java, cp := testenv.Java(t), testenv.CuratorClasspath(t)
	classes := t.TempDir()
	javac := strings.TrimSuffix(java, "java") + "javac"
	if out, err := exec.Command(javac, "-d", classes, "-cp", cp, "testdata/CuratorLock.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command(java, "-Xmx64m", "-cp", classes+":"+cp, "CuratorLock", servers, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("CuratorLock's stderr:\n%s", stderr.String())
		}
	})
	c := &curator{t: t, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			c.lines <- s.Text()
		}
		close(c.lines)
	}()
	c.want("ready", 30*time.Second)
	return c
}

// send sends a command without waiting for its answer.
func (c *curator) send(cmd string) {
	c.t.Helper()
	if _, err := fmt.Fprintln(c.stdin, cmd); err != nil {
		c.t.Fatalf("CuratorLock %s: %v", cmd, err)
	}
}

// want waits for the next line and fails unless it is line.
func (c *curator) want(line string, within time.Duration) {
	c.t.Helper()
	select {
	case got, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("CuratorLock exited; want %q", line)
		}
		if got != line {
			c.t.Fatalf("CuratorLock said %q; want %q", got, line)
		}
	case <-time.After(within):
		c.t.Fatalf("CuratorLock said nothing in %v; want %q", within, line)
	}
}

// do sends cmd and checks its answer.
func (c *curator) do(cmd, answer string) {
	c.t.Helper()
	c.send(cmd)
	c.want(answer, 10*time.Second)
}

// TestCuratorExcludes: a Go holder and a Java Curator InterProcessMutex
// on the same path exclude each other, in both directions, and each
// waiter, Go or Java, gets the lock right after the other releases it.
func TestCuratorExcludes(t *testing.T) {
	t.Parallel()
	servers := sharedServers(t)
	root := uniqueRoot("curator")
	l := newTestLocker(t, connect(t, servers, testSessionTimeout), &Options{Root: root})
	ctx := t.Context()
	java := startCurator(t, servers, l.d.lockPath("job"))

	// Java holds: Go's Acquire is refused, naming Java's node.
	java.do("try", "acquired")
	_, err := l.Acquire(ctx, "job", 5*time.Second, nil)
	he, ok := errors.AsType[*fence.HeldError](err)
	if !ok {
		t.Fatalf("Acquire while Java holds: %v; want a *fence.HeldError", err)
	}
	if !strings.Contains(he.Owner, "zookeeper node _c_") || he.Token == 0 {
		t.Fatalf("HeldError names owner %q, token %d; want Java's node and its czxid", he.Owner, he.Token)
	}
	t.Logf("Java's holder: %s, token %d", he.Owner, he.Token)
	info, err := l.Inspect(ctx, "job")
	if err != nil || !info.Held || info.Owner != he.Owner || info.Token != he.Token {
		t.Fatalf("Inspect = %+v, %v; want held by Java's node %q with token %d", info, err, he.Owner, he.Token)
	}

	// A Go Lock waits behind Java and gets the key once Java releases.
	waiting := fence.SessionOptions{TTL: 5 * time.Second, PollInterval: time.Hour}
	result, busy := waittest.StartLock(t, l.Locker, "job", waiting)
	released := time.Now()
	java.do("release", "released")
	r := waittest.Wait(t, result, waittest.WakeBound)
	t.Logf("Go's Lock got the key %v after Java's release, after %d busy attempts", r.At.Sub(released), busy.Load())
	if r.Handle.Token() <= he.Token {
		t.Errorf("Go's token %d, want above Java's %d", r.Handle.Token(), he.Token)
	}

	// Go holds: Java's try fails, and Java's acquire waits in line until
	// Go releases. Go's holder outlives several TTLs meanwhile.
	java.do("try", "busy")
	java.send("acquire")
	time.Sleep(3 * waiting.TTL)
	select {
	case line := <-java.lines:
		t.Fatalf("Java said %q while Go held the lock", line)
	default:
	}
	if err := r.Handle.Err(); err != nil {
		t.Fatalf("Go's handle lost the key while Java waited: %v", err)
	}
	info, err = l.Inspect(ctx, "job")
	if err != nil || info.Owner != r.Handle.Lease().Owner || info.Token != r.Handle.Token() {
		t.Fatalf("Inspect with Java in line = %+v, %v; want Go's holder %q, token %d", info, err, r.Handle.Lease().Owner, r.Handle.Token())
	}
	if err := r.Handle.Release(ctx); err != nil {
		t.Fatal(err)
	}
	java.want("acquired", waittest.WakeBound)
	if _, err := l.Acquire(ctx, "job", 5*time.Second, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire while Java holds again: %v; want fence.ErrHeld", err)
	}
	java.do("release", "released")
	lease, err := l.Acquire(ctx, "job", 5*time.Second, nil)
	if err != nil {
		t.Fatalf("Acquire after Java's second release: %v", err)
	}
	if lease.Token <= r.Handle.Token() {
		t.Errorf("token %d after Java's turn, want above %d", lease.Token, r.Handle.Token())
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
}
