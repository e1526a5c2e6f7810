// Package exitcode maps errors to trtbuild's process exit codes, in one place.
package exitcode

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Code is a process exit status.
type Code int

// Exit codes (README "Exit codes").
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

// ForSignal is the exit status of a command ended by sig: 128 and the signal's number, as a
// shell reports a process killed by it.
func ForSignal(sig os.Signal) Code {
	switch sig {
	case syscall.SIGHUP:
		return Hangup
	case syscall.SIGQUIT:
		return Quit
	case syscall.SIGTERM:
		return Terminated
	}
	return Interrupted
}

// BySignal reports whether c is the status of a command a signal ended.
func BySignal(c Code) bool {
	return c == Hangup || c == Interrupted || c == Quit || c == Terminated
}

// SignalName names sig for messages: "interrupted (SIGINT)".
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	case syscall.SIGQUIT:
		return "quit (SIGQUIT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return "interrupted (SIGINT)"
}

// Error carries an exit code with the error that caused it. Reported means the message was
// already shown to the user (for example in the final frame), so main prints nothing more.
type Error struct {
	Code     Code
	Err      error
	Reported bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef returns a usage error (exit 2) with a formatted message.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
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
