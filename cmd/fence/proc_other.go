//go:build !linux

package main

import "syscall"

// sysProcAttr puts the command in a process group of its own, so that
// SIGTERM and SIGKILL reach the processes it starts too.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
