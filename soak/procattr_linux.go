package soak

import "syscall"

// childAttr makes the kernel kill the server when the soak dies, so that no process outlives it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
