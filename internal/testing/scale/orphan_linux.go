package scale

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes cmd end when the process that started it does.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
