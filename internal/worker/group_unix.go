//go:build unix

package worker

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the worker in a process group of its own, so the terminal's Ctrl-C
// reaches only the parent, which decides what to do.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// The negative PID names the group: plugins or helper processes the worker started die too.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return cmd.Process.Kill()
	}
	return nil
}
