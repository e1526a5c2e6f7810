package worker

import "syscall"

// setParentDeathSignal has the kernel send the worker SIGTERM when the parent dies
// (PR_SET_PDEATHSIG), also when it is SIGKILLed and cannot close anything itself. The worker
// treats SIGTERM as its parent's death only when its parent process did change (see
// ServeFiles): the signal also comes when the parent's thread that started the worker ends.
func setParentDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGTERM
}
