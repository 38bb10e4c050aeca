package main

import "syscall"

// sysProcAttr puts the command in a process group of its own, so that
// SIGTERM and SIGKILL reach the processes it starts too, and asks Linux to
// send it SIGTERM if fence dies first (fence then no longer renews the
// lease).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
