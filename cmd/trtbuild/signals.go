package main

import (
	"os"
	"os/signal"
	"syscall"
)

// ignoreSignals makes the worker deaf to SIGINT and SIGTERM: the parent decides, and tells the
// worker over the control pipe (or kills it).
func ignoreSignals() {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
}
