package exitcode

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/trtbuild/trtbuild/internal/pathtext"
)

// SignalError is the exit error for a signal that came at a point where there was nothing to
// cancel; when says when ("before the build started; nothing was written").
func SignalError(sig os.Signal, when string) error {
	return &Error{Code: ForSignal(sig), Err: fmt.Errorf("%s %s", SignalName(sig), when)}
}

// OneLine is err's message on one line, with no control bytes (pathtext.Line): a file name in
// it cannot start a new line or a terminal escape sequence. An *Error gives its cause's text.
func OneLine(err error) string {
	msg := err.Error()
	var e *Error
	if errors.As(err, &e) {
		msg = e.Error()
	}
	return line(msg)
}

// line is msg on one line, its white space runs made single spaces.
func line(msg string) string { return strings.Join(strings.Fields(pathtext.Line(msg)), " ") }

// Split is err's one line (OneLine) cut into what is wrong and what to do: the hint is the
// first Hint in err's chain (an *Error's field, set where the error was made). A message from a
// layer that joins its hint into the text, "what is wrong; what to do", is cut at its first
// "; ": this is the one place that reads a hint out of a message. A message with neither is all
// problem.
func Split(err error) (problem, hint string) {
	msg := OneLine(err)
	if h := hintOf(err); h != "" {
		hint = line(h)
		if p, ok := strings.CutSuffix(msg, "; "+hint); ok {
			return p, hint
		}
		return strings.Replace(msg, "; "+hint, "", 1), hint
	}
	if p, h, ok := strings.Cut(msg, "; "); ok {
		return p, h
	}
	return msg, ""
}

// hintOf is the first Hint of an *Error in err's tree, "" if none has one.
func hintOf(err error) string {
	switch e := err.(type) {
	case nil:
		return ""
	case *Error:
		if e.Hint != "" {
			return e.Hint
		}
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if h := hintOf(inner); h != "" {
				return h
			}
		}
		return ""
	}
	return hintOf(errors.Unwrap(err))
}

// PathCause is the cause of an *os.PathError without the operation and path a message names
// itself; other errors are returned as they are.
func PathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// SyscallCause is the errno inside err, with a closed pipe (IsClosedPipe) said as "broken
// pipe"; other errors are returned as they are.
func SyscallCause(err error) error {
	if IsClosedPipe(err) {
		return errors.New("broken pipe")
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// IsClosedPipe says whether err is a write to a pipe whose reader went away: EPIPE, and on
// Windows also ERROR_BROKEN_PIPE and ERROR_NO_DATA (closedPipeErrnos). trtbuild treats it as
// the user's choice to stop reading (`| head -1`), with exit status ClosedPipe.
func IsClosedPipe(err error) bool {
	for _, errno := range closedPipeErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}
