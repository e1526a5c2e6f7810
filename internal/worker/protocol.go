// Package worker runs a build in a child process of the trtbuild binary and talks to it.
//
// The parent starts `trtbuild __worker` with three channels:
//
//	stdin  — the control pipe, parent to worker, JSON lines: first {"v":1,"type":"build",
//	         "request":{…}}, then {"v":1,"type":"cancel"} when the user cancels. When the pipe
//	         closes (the parent died), the worker cancels the build itself.
//	fd 3   — the event pipe, worker to parent: JSON lines in the schema of docs/events.md
//	         (phase_start, step, phase_finish, log, and a last result line).
//	fd 4   — the plan file: an open temporary file next to the engine path. The worker writes
//	         the plan into it; only the parent renames it into place, after a successful build,
//	         so a crash or a cancel never leaves a partial engine.
//
// On Windows, which has no fds 3 and 4, the two are inherited handles whose values the
// environment variable TRTBUILD_WORKER_HANDLES gives ("EVENTS,PLAN"), and the worker runs in a
// Job Object that ends it with its parent (see processGroup in group_windows.go).
//
// The worker's own stdout and stderr go to a pipe the parent keeps the tail of: anything a
// library prints there is shown when the worker crashes, and never corrupts the terminal.
// Signals are the parent's business: the worker ignores SIGINT and SIGTERM and runs in its own
// process group (on Windows: with a console of its own, without a window, so that no console
// control event of the user's reaches it), and only the worker loads the builder library.
package worker

import (
	"encoding/json"
	"fmt"

	"github.com/trtbuild/trtbuild/internal/progress"
)

// Subcommand is the hidden command line argument that starts a worker.
const Subcommand = "__worker"

// File descriptors the worker inherits, after stdin, stdout and stderr.
const (
	eventsFD = 3
	planFD   = 4
)

type control struct {
	V       int      `json:"v"`
	Type    string   `json:"type"`
	Request *Request `json:"request,omitempty"`
}

const (
	controlBuild  = "build"
	controlCancel = "cancel"
)

func encodeControl(c control) ([]byte, error) {
	c.V = progress.SchemaVersion
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding control message: %w", err)
	}
	return append(b, '\n'), nil
}

func decodeControl(line []byte) (control, error) {
	var c control
	if err := json.Unmarshal(line, &c); err != nil {
		return c, fmt.Errorf("malformed control message: %w", err)
	}
	if c.V != progress.SchemaVersion {
		return c, fmt.Errorf("control message version %d, want %d: parent and worker are different trtbuild binaries", c.V, progress.SchemaVersion)
	}
	return c, nil
}
