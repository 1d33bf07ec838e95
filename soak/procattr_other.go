//go:build !linux

package soak

import "syscall"

// childAttr has no parent-death signal outside Linux; Run still stops the server on every exit
// path it controls.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
