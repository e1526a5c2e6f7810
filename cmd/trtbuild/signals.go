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

// earlySignals is the first thing main does. SIGPIPE is ignored, so a write to a closed stdout
// returns EPIPE (the build goes on; see internal/outstream). SIGINT and SIGTERM are delivered
// to the returned channel: a build or a replay reads it, and the other commands give the
// signals back their default action once they know who they are (releaseSignals). A build
// answers SIGINT also when it started with SIGINT ignored (a background job of a shell script).
//
// SIGPIPE is ignored last on purpose: a test can see in /proc/PID/status (SigIgn) that the
// handlers are in place (scripts/fault-campaign.sh does).
func earlySignals() chan os.Signal {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	signal.Ignore(syscall.SIGPIPE)
	return sigs
}

// releaseSignals gives SIGINT and SIGTERM their default action back, for commands that do
// not handle them; a signal that already arrived ends the command before it starts.
func releaseSignals(sigs chan os.Signal) error {
	if sigs == nil {
		return nil
	}
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	select {
	case sig := <-sigs:
		return signalError(sig, "before the command started")
	default:
		return nil
	}
}
