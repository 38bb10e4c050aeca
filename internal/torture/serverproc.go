package torture

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// serverProc is a private server process of the run (a MariaDB server, a
// ZooKeeper ensemble member), in a process group of its own, its output
// appended to a log file.
type serverProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
}

// errServerExited is what a start reports when the server exited before it
// answered.
var errServerExited = errors.New("torture: server exited")

// startServerProc starts name with args, its output appended to logPath.
func startServerProc(logPath, name string, args ...string) (*serverProc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// kill kills the process group with SIGKILL, as a crash would, and waits
// for the process to exit. A nil *serverProc is not running.
func (p *serverProc) kill() {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}
