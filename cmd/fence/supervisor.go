package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/fencekit/fence"
)

// Environment variables `fence run` exports to the command.
const (
	EnvToken = "FENCE_TOKEN"
	EnvKey   = "FENCE_KEY"
	EnvOwner = "FENCE_OWNER"
)

// forwarded are the signals fence passes on to the command's process
// group while it runs; before it runs they stop the wait for the lock.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// supervisor starts the command under a lease, forwards signals to it and
// stops it when the lease is lost.
type supervisor struct {
	c     *cli
	argv  []string
	grace time.Duration
	// cancelAcquire ends the wait for the lock when a signal comes first.
	cancelAcquire context.CancelFunc

	mu      sync.Mutex
	started bool // the command was started (or we gave up on it)
	pgid    int  // the command's process group while it runs, else 0
	intr    syscall.Signal
	outcome string // how the command ended, for reports
	// lostSaid: stop printed the lost lease, which runResult then does
	// not repeat.
	lostSaid bool
}

func newSupervisor(c *cli, argv []string, grace time.Duration) *supervisor {
	return &supervisor{c: c, argv: argv, grace: grace}
}

// watchSignals handles the forwarded signals until the returned stop is
// called.
func (s *supervisor) watchSignals() (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, forwarded...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.onSignal(sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

func (s *supervisor) onSignal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.pgid != 0:
		_ = syscall.Kill(-s.pgid, sig)
	case !s.started && s.intr == 0:
		s.intr = sig
		if s.cancelAcquire != nil {
			s.cancelAcquire()
		}
	}
	// After the command ended fence only releases the lease, which is
	// bounded: the signal is ignored.
}

// interrupted returns the signal that stopped the wait for the lock, or 0.
func (s *supervisor) interrupted() syscall.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intr
}

// status describes how the command ended, or "" if it never ran.
func (s *supervisor) status() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outcome
}

// exitError is a command that exited with a non-zero status or was killed
// by a signal; code is fence's exit status for it.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("command exited with status %d", e.code) }

// startError is a command that could not be started.
type startError struct {
	code int
	err  error
}

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// run is the guard's work: it runs the command with the lock's key, token
// and owner in its environment until it exits, or stops it when ctx is
// cancelled (the lease was lost).
func (s *supervisor) run(ctx context.Context, h *fence.Handle) error {
	s.mu.Lock()
	if s.intr != 0 || ctx.Err() != nil {
		s.started = true
		s.mu.Unlock()
		return context.Cause(ctx)
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(),
		EnvToken+"="+h.Token().String(), EnvKey+"="+h.Key(), EnvOwner+"="+h.Lease().Owner)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = sysProcAttr()
	waited := make(chan error, 1)
	startErr := start(cmd, waited)
	s.started = true
	if startErr != nil {
		s.mu.Unlock()
		return classifyStart(s.argv[0], startErr)
	}
	s.pgid = cmd.Process.Pid
	s.mu.Unlock()

	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		werr = s.stop(ctx, waited)
	}
	s.mu.Lock()
	s.pgid = 0
	code := exitCode(cmd.ProcessState)
	s.outcome = describe(cmd.ProcessState)
	s.mu.Unlock()
	if ctx.Err() != nil {
		return context.Cause(ctx) // the lease-lost error
	}
	if werr != nil && code == 0 {
		return werr
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// stop sends SIGTERM to the command's process group and waits until
// every process of the group is gone, not only the command itself: a
// process the command started may ignore SIGTERM and go on working after
// the lease was lost. When any is left after the grace period, it sends
// SIGKILL to the group, and waits for the group to go (up to killWait).
func (s *supervisor) stop(ctx context.Context, waited <-chan error) error {
	s.c.errorf("%s; sending SIGTERM to the command", lostMessage(context.Cause(ctx)))
	s.mu.Lock()
	s.lostSaid = true
	pgid := s.pgid
	s.mu.Unlock()
	s.signal(syscall.SIGTERM)
	var werr error
	exited := false
	if s.grace > 0 {
		grace := time.NewTimer(s.grace)
		defer grace.Stop()
		werr, exited = waitGroup(pgid, waited, grace.C)
		if exited && !groupAlive(pgid) {
			return werr
		}
	}
	if exited {
		s.c.errorf("processes of the command's group are still running %v after SIGTERM; sending SIGKILL to the group", s.grace)
	} else {
		s.c.errorf("the command is still running %v after SIGTERM; sending SIGKILL", s.grace)
	}
	s.signal(syscall.SIGKILL)
	if !exited {
		werr = <-waited
	}
	limit := time.NewTimer(killWait)
	defer limit.Stop()
	waitGroup(pgid, nil, limit.C)
	if groupAlive(pgid) {
		s.c.errorf("warning: processes of the command's group are still there %v after SIGKILL", killWait)
	}
	return werr
}

// killWait bounds the wait for the command's process group to go after
// SIGKILL, which ends every process but one stuck in the kernel.
const killWait = 5 * time.Second

// groupPoll is how often stop looks whether the command's process group
// is gone.
const groupPoll = 20 * time.Millisecond

// waitGroup waits until the command has exited (its result comes on
// waited; nil: it has already) and no process of group pgid is left, or
// until done. It returns the command's result, and whether it came.
func waitGroup(pgid int, waited <-chan error, done <-chan time.Time) (werr error, exited bool) {
	exited = waited == nil
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for {
		if exited && !groupAlive(pgid) {
			return werr, exited
		}
		select {
		case werr = <-waited:
			exited, waited = true, nil
		case <-tick.C:
		case <-done:
			return werr, exited
		}
	}
}

// groupAlive reports whether process group pgid has a process left.
func groupAlive(pgid int) bool {
	return pgid != 0 && !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// lostReported reports whether stop has printed the lost lease.
func (s *supervisor) lostReported() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lostSaid
}

func (s *supervisor) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pgid != 0 {
		_ = syscall.Kill(-s.pgid, sig)
	}
}

// start starts cmd on a goroutine locked to its OS thread, which waits for
// it and sends the result of Wait on waited. The parent-death signal (see
// sysProcAttr) is tied to the thread that started the child, so that
// thread must live as long as the child.
func start(cmd *exec.Cmd, waited chan<- error) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	return <-started
}

// classifyStart gives a command that could not start the status a shell
// gives it: 127 when not found, 126 otherwise.
func classifyStart(name string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return &startError{code: exitNotFound, err: fmt.Errorf("command %q not found", name)}
	}
	return &startError{code: exitCannotRun, err: fmt.Errorf("cannot run %q: %w", name, err)}
}

// exitCode is the status a shell reports for a finished process: its exit
// status, or 128 plus the signal that killed it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return exitCannotRun
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignal + int(ws.Signal())
	}
	return ps.ExitCode()
}

func describe(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by %v (status %d)", unixName(ws.Signal()), exitSignal+int(ws.Signal()))
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

func unixName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return sig.String()
}
