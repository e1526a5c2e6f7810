//go:build !windows

package main

import (
	"os/signal"
	"syscall"
)

// ignoreSignals makes the worker deaf to the handled signals: the parent decides, and tells
// the worker over the control pipe (or kills it).
func ignoreSignals() {
	signal.Ignore(handled...)
}

// ignoreClosedPipeSignal ignores SIGPIPE, so that a write to a closed stdout returns EPIPE.
func ignoreClosedPipeSignal() {
	signal.Ignore(syscall.SIGPIPE)
}
