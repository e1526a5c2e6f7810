package main

import (
	"fmt"
	"os"
	"os/signal"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// handled are the signals trtbuild answers itself (exitcode.Signals): on Linux a build cancels
// on SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) and stops at once on
// SIGQUIT; on Windows it cancels on Ctrl-C and Ctrl-Break (os.Interrupt) and on a closed
// console, logoff or shutdown (SIGTERM), each with its exit status (internal/exitcode); other
// commands end with that status and a message.
var handled = exitcode.Signals()

// earlySignals is the first thing main does. A write to a closed stdout is made an error to
// handle (ignoreClosedPipeSignal; the build goes on, see internal/outstream). The handled
// signals are delivered to the returned channel: a build or a replay reads it, and the other
// commands give the signals back their default action once they know who they are
// (releaseSignals). A build answers SIGINT also when it started with SIGINT ignored (a
// background job of a shell script).
//
// SIGPIPE is ignored last on purpose: a test can see in /proc/PID/status (SigIgn) that the
// handlers are in place (scripts/fault-campaign.sh does).
func earlySignals() chan os.Signal {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, handled...)
	ignoreClosedPipeSignal()
	return sigs
}

// exitOnSignal is the signal handling of the commands that have nothing to cancel (inspect,
// key, version, convert …): a signal ends the command at once with its exit status
// (internal/exitcode) and one line on stderr; what it was writing is never put in place
// (internal/outpath). A signal that already arrived ends the command before it starts.
func exitOnSignal(s *streams) error {
	if s.Signals == nil {
		return nil
	}
	select {
	case sig := <-s.Signals:
		return exitcode.SignalError(sig, "before the command started")
	default:
	}
	go func() {
		sig := <-s.Signals
		fmt.Fprintf(s.Err, "trtbuild: %s; stopped\n", exitcode.SignalName(sig))
		s.Console.Restore()
		os.Exit(int(exitcode.ForSignal(sig)))
	}()
	return nil
}

// buildSignals are the signals a build, a matrix build or a replay answers: those main caught
// from its start (streams.Signals), or, in tests that call run directly, its own; stop ends
// them.
func buildSignals(s *streams) (sigs <-chan os.Signal, stop func()) {
	if s.Signals != nil {
		return s.Signals, func() {}
	}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, handled...)
	return ch, func() { signal.Stop(ch) }
}
