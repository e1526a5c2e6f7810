package worker

// Test-only API of package worker: exported names that only this package's tests use, so
// they are not part of what the rest of trtbuild can call.

import (
	"io"
	"os"
)

// Serve is serveWith with a watchdog without a hard exit, so that a test runs a worker's build
// in its own process.
func Serve(ctrl io.Reader, events io.Writer, plan *os.File) error {
	return serveWith(ctrl, events, plan, newWatchdog(nil))
}
