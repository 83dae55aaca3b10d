package chaos

import "syscall"

// sysProcAttr makes the kernel kill a child when the run's process dies,
// so a crashed or killed run leaves no nodes or workers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
