package exitcode

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// signalTable: Windows has no SIGHUP, SIGQUIT or SIGPIPE. Go's runtime turns the console's
// CTRL_C_EVENT and CTRL_BREAK_EVENT into os.Interrupt, and CTRL_CLOSE_EVENT (the console
// window was closed), CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT into syscall.SIGTERM; a build
// cancels on both, with the exit statuses trtbuild has on Linux (130 and 143). The first entry
// is the default.
var signalTable = []signalMeaning{
	{sig: os.Interrupt, code: Interrupted, name: "interrupted (Ctrl-C)"},
	{sig: syscall.SIGTERM, code: Terminated, name: "terminated (the console was closed, or the user logged off, or Windows shuts down)", grace: consoleCloseGrace},
}

// consoleCloseGrace is how long a build may take to stop after CTRL_CLOSE_EVENT: Windows ends
// the process 5 s after the event (SPI_GETHUNGAPPTIMEOUT's default; logoff and shutdown use
// the same or a shorter wait), and the worker's stop and the clean-up must fit before that.
const consoleCloseGrace = 3 * time.Second

// closedPipeErrnos are the errors of a write to a pipe whose reader closed it: Windows reports
// ERROR_BROKEN_PIPE, or ERROR_NO_DATA when the pipe is being closed; EPIPE comes from Go code
// that reports it itself.
var closedPipeErrnos = []syscall.Errno{syscall.EPIPE, windows.ERROR_BROKEN_PIPE, windows.ERROR_NO_DATA}
