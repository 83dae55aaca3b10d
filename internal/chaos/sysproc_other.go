//go:build !linux

package chaos

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; the run stops its
// children itself on every way out but a crash of its own.
func sysProcAttr() *syscall.SysProcAttr { return nil }
