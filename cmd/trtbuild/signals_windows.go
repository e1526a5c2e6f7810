package main

import (
	"os"
	"os/signal"
)

// Console control events on Windows.
//
// Go's runtime registers its console control handler (runtime/os_windows.go, ctrlHandler) at
// start-up: for CTRL_C_EVENT and CTRL_BREAK_EVENT it queues os.Interrupt, for
// CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT syscall.SIGTERM. The handler,
// which Windows runs on a thread of its own, does only that: sigsend sets the signal's bit in
// the runtime's pending mask with an atomic compare-and-swap and wakes the goroutine that
// reads signals, taking no lock and calling nothing that could block on the rest of the
// program. So it is the handler that only sets a flag: signal.Notify's channel is read by an
// ordinary goroutine (the build session, serve, the other commands' exitOnSignal), which asks
// for the cancel. For the SIGTERM events the handler then parks its thread instead of
// returning, because Windows ends the process once it returns; Windows still ends it 5 s after
// CTRL_CLOSE_EVENT, which is why a build stops its worker within exitcode.Grace of it.
//
// A signal nobody asked for (no signal.Notify, or signal.Ignore) makes the handler return 0,
// and the next handler, Windows' default, ends the process at once with
// STATUS_CONTROL_C_EXIT: on Windows signal.Ignore does not ignore a console event.

// ignoreSignals makes the worker deaf to console control events: the parent decides, and
// tells the worker over the control pipe (or stops its job). The worker has a console of its
// own without a window (internal/worker), so the user's Ctrl-C does not reach it; should an
// event come anyway, it is taken and dropped, since signal.Ignore would let Windows end the
// worker (see above).
func ignoreSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, handled...)
	go func() {
		for range ch {
		}
	}()
}

// ignoreClosedPipeSignal does nothing: Windows has no SIGPIPE, and a write to a closed pipe
// returns ERROR_BROKEN_PIPE or ERROR_NO_DATA (exitcode.IsClosedPipe).
func ignoreClosedPipeSignal() {}
