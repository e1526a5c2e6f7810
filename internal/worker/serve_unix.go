//go:build !windows

package worker

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// inheritedFiles are the event pipe and the plan file, fds 3 and 4 (see the package comment).
func inheritedFiles() (events, plan *os.File, err error) {
	events = os.NewFile(eventsFD, "events")
	plan = os.NewFile(planFD, "plan")
	if events == nil || plan == nil {
		return nil, nil, errors.New("the worker must be started by trtbuild, not by hand")
	}
	return events, plan, nil
}

// watchParent watches for the parent-death signal: SIGTERM from the kernel when the parent
// exits (PR_SET_PDEATHSIG). SIGTERM while the parent lives (sent by hand to the worker's own
// process group) is ignored: the parent decides. stop ends the watch.
func watchParent(wd *watchdog) (stop func()) {
	parent := startedBy()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		for range term {
			if os.Getppid() != parent {
				wd.parentGone()
			}
		}
	}()
	if os.Getppid() != parent {
		wd.parentGone() // it died before the worker got here: the worker was reparented
	}
	return func() { signal.Stop(term) }
}

// startedBy is the pid of the trtbuild that started this worker: from parentPIDEnv, which
// cannot lie the way "my parent is PID 1" does (in a container trtbuild itself is PID 1);
// without it, the parent as it is now.
func startedBy() int {
	if pid, err := strconv.Atoi(os.Getenv(parentPIDEnv)); err == nil && pid > 0 {
		return pid
	}
	return os.Getppid()
}
