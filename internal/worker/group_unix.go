//go:build unix

package worker

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// processGroup is the worker's process group: the worker and whatever it starts, stopped
// together.
type processGroup struct{}

// newProcessGroup sets cmd up to start the worker in a process group of its own, so the
// terminal's Ctrl-C reaches only the parent, which decides what to do, with the event pipe and
// the plan file as fds 3 and 4 (see the package comment), and with the parent-death signal
// where there is one.
func newProcessGroup(cmd *exec.Cmd, events, plan, modelFolder *os.File) (*processGroup, error) {
	cmd.ExtraFiles = []*os.File{events, plan} // fds 3 and 4
	if modelFolder != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, modelFolder) // fd 5, ModelFolderFD
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	return &processGroup{}, nil
}

// started is called once cmd has started; the worker runs already.
func (*processGroup) started(*exec.Cmd) error { return nil }

// abandon undoes newProcessGroup when the worker did not start.
func (*processGroup) abandon() {}

// kill stops the worker and its process group at once.
func (*processGroup) kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// The negative PID names the group: plugins or helper processes the worker started die too.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return cmd.Process.Kill()
	}
	return nil
}

// release is called once the worker has exited.
func (*processGroup) release() {}

// modelFolderArg is Request.ModelFolder for the folder the worker inherits as fd 5.
func modelFolderArg(*os.File, string) string { return ModelFolderFD }

// enterModelFolder makes the worker work in the model's folder, fd 5 (ModelFolderFD).
func enterModelFolder(arg string) error {
	if arg != ModelFolderFD {
		return fmt.Errorf("model folder %q is not %s", arg, ModelFolderFD)
	}
	if err := syscall.Fchdir(5); err != nil {
		return fmt.Errorf("entering the model's folder: %w", err)
	}
	return nil
}
