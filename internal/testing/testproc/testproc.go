// Package testproc runs servers that a test starts, kills and restarts
// itself: the members of an etcd cluster whose leader a test kills, a Redis
// primary that fails over, the independent masters of Redlock. Each server
// is a real process of the binary that scripts/test.sh installed, on
// loopback ports picked free, with its output in a log file that a failing
// test prints.
package testproc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Proc is a server process of a test. Its methods are safe for
// concurrent use.
type Proc struct {
	t    testing.TB
	name string
	bin  string
	args []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts bin with args, its output appended to a log file in a
// temporary directory of t; the process is killed when the test ends, and
// its log printed if the test failed.
func Start(t testing.TB, name, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, name: name, bin: bin, args: args, log: filepath.Join(t.TempDir(), name+".log")}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			if b, err := os.ReadFile(p.log); err == nil {
				t.Logf("%s log:\n%s", name, b)
			}
		}
	})
	p.Restart()
	return p
}

// Name returns the name given to Start.
func (p *Proc) Name() string { return p.name }

// Restart starts the process again with the same arguments, after Kill or
// Stop (it is a no-op while the process runs).
func (p *Proc) Restart() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
}

// Running reports whether the process runs (it was started and neither
// killed, stopped nor exited).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Kill kills the process with SIGKILL, as a crash would, and waits for it
// to exit. It is a no-op when the process does not run.
func (p *Proc) Kill() { p.signal(syscall.SIGKILL) }

// Stop stops the process with SIGTERM, letting it shut down cleanly, and
// waits up to 10 s before it kills it.
func (p *Proc) Stop() { p.signal(syscall.SIGTERM) }

func (p *Proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}

// Pause stops the process with SIGSTOP (it keeps its sockets but answers
// nothing) until Resume.
func (p *Proc) Pause() { p.send(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *Proc) Resume() { p.send(syscall.SIGCONT) }

func (p *Proc) send(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// Log returns what the process has written so far, across restarts.
func (p *Proc) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// WaitLog waits until the log contains s, failing the test after timeout
// or when ctx ends.
func (p *Proc) WaitLog(ctx context.Context, s string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if b, _ := os.ReadFile(p.log); bytes.Contains(b, []byte(s)) {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.t.Fatalf("%s: %q not in its log after %v", p.name, s, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// String names the process and its pid.
func (p *Proc) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return p.name + " (not running)"
	}
	return fmt.Sprintf("%s (pid %d)", p.name, p.cmd.Process.Pid)
}
