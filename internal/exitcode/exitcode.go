// Package exitcode maps errors to trtbuild's process exit codes, in one place.
package exitcode

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// Code is a process exit status.
type Code int

// Exit codes (docs/usage.md, "Exit codes").
const (
	OK          Code = 0   // the engine was built
	Failed      Code = 1   // the build failed, or the worker crashed; or inspect --check found a reason
	Usage       Code = 2   // bad flags or input; nothing was started
	ParentGone  Code = 3   // a build worker whose parent died (nobody reads it; never trtbuild's own)
	TimedOut    Code = 124 // --timeout or --stall-timeout ended the build
	Hangup      Code = 129 // cancelled by SIGHUP (the terminal or SSH session closed)
	Interrupted Code = 130 // cancelled by SIGINT (Ctrl-C)
	Quit        Code = 131 // stopped at once by SIGQUIT (Ctrl-\)
	ClosedPipe  Code = 141 // stdout's reader went away (SIGPIPE's status in a shell)
	Terminated  Code = 143 // cancelled by SIGTERM
)

// signalMeaning is what one signal trtbuild answers means: its exit status, its name in
// messages, and whether it stops at once instead of cancelling at the next step boundary. The
// list of them, signalTable, is per OS (signals_unix.go, signals_windows.go).
type signalMeaning struct {
	sig    os.Signal
	code   Code
	name   string
	atOnce bool
	// grace, when not zero, is how long trtbuild may take to stop after the signal before the
	// system ends the process itself (Windows gives a closed console 5 s).
	grace time.Duration
}

// meaning is sig's entry in signalTable; a signal not in it means what os.Interrupt does.
func meaning(sig os.Signal) signalMeaning {
	for _, m := range signalTable {
		if m.sig == sig {
			return m
		}
	}
	return signalTable[0]
}

// Signals are the signals trtbuild answers itself, on this OS, in signalTable's order.
func Signals() []os.Signal {
	sigs := make([]os.Signal, len(signalTable))
	for i, m := range signalTable {
		sigs[i] = m.sig
	}
	return sigs
}

// ForSignal is the exit status of a command ended by sig: 128 and the signal's number, as a
// shell reports a process killed by it (on Windows the same numbers: 130 for Ctrl-C, 143 for a
// closed console).
func ForSignal(sig os.Signal) Code { return meaning(sig).code }

// StopsAtOnce says whether sig stops a build at once (SIGQUIT) rather than being a rung of the
// cancel ladder.
func StopsAtOnce(sig os.Signal) bool { return meaning(sig).atOnce }

// Grace is how long a build may take to stop after sig before the system ends trtbuild
// itself, 0 when it does not. On Windows a closed console (CTRL_CLOSE_EVENT, syscall.SIGTERM)
// gives the process 5 s after the event before Windows ends it, logoff and shutdown no more:
// the build is cancelled, and stopped at once when it has not stopped within Grace, so that
// the temporary files are removed and the previous engine stays in place in time.
func Grace(sig os.Signal) time.Duration { return meaning(sig).grace }

// BySignal reports whether c is the status of a command a signal ended.
func BySignal(c Code) bool {
	return c == Hangup || c == Interrupted || c == Quit || c == Terminated
}

// SignalName names sig for messages: "interrupted (SIGINT)".
func SignalName(sig os.Signal) string { return meaning(sig).name }

// Error carries an exit code with the error that caused it. Hint, when set, says what to do
// about it, apart from what is wrong (Err): every front end shows the two as fields (a result
// line's hint, an HTTP problem's hint, an MCP error's) and the message joins them as
// "what is wrong; what to do". Reported means the message was already shown to the user (for
// example in the final frame), so main prints nothing more.
type Error struct {
	Code     Code
	Err      error
	Hint     string
	Reported bool
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Err.Error() + "; " + e.Hint
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Hintf sets e's hint, what to do about it, and returns e.
func (e *Error) Hintf(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// Usagef returns a usage error (exit 2) with a formatted message; Hintf adds what to do.
func Usagef(format string, args ...any) *Error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Hinted attaches a hint to err, keeping err's exit code (Of); a nil err stays nil.
func Hinted(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Code: Of(err), Err: err, Hint: hint}
}

// Wrap attaches code to err; a nil err stays nil.
func Wrap(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Of returns the exit code for err: OK for nil, the code of the outermost *Error, else Failed.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failed
}

// IsReported says whether err's message was already shown to the user.
func IsReported(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Reported
}
