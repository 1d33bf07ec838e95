package e2e

import "syscall"

// childAttr makes the kernel kill a server when the test binary dies, so that a crashed or
// timed-out run leaves no process behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
