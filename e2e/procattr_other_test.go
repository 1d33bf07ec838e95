//go:build !linux

package e2e

import "syscall"

// childAttr has no parent-death signal outside Linux; cleanup alone stops the servers there.
func childAttr() *syscall.SysProcAttr { return nil }
