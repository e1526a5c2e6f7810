//go:build unix && !linux

package worker

import "syscall"

// setParentDeathSignal does nothing where there is no PR_SET_PDEATHSIG: the end of the control
// pipe tells the worker that its parent died.
func setParentDeathSignal(*syscall.SysProcAttr) {}
