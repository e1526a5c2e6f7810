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
		msg = e.Err.Error()
	}
	return strings.Join(strings.Fields(pathtext.Line(msg)), " ")
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
