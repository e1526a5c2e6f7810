//go:build !windows

package exitcode

import (
	"os"
	"syscall"
)

// signalTable: a build cancels on SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal or SSH
// session closed) and stops at once on SIGQUIT (Ctrl-\). The first entry is the default.
var signalTable = []signalMeaning{
	{sig: os.Interrupt, code: Interrupted, name: "interrupted (SIGINT)"},
	{sig: syscall.SIGTERM, code: Terminated, name: "terminated (SIGTERM)"},
	{sig: syscall.SIGHUP, code: Hangup, name: "hung up (SIGHUP)"},
	{sig: syscall.SIGQUIT, code: Quit, name: "quit (SIGQUIT)", atOnce: true},
}

// closedPipeErrnos are the errors of a write to a pipe nobody reads (SIGPIPE ignored).
var closedPipeErrnos = []syscall.Errno{syscall.EPIPE}
