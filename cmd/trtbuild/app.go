package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/pathtext"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// streams are the process's standard files and environment, injected so tests can replace them.
type streams struct {
	In      *os.File
	Out     io.Writer
	OutFile *os.File // stdout as a file, for the live view
	Err     io.Writer
	OutTTY  bool // stdout is a terminal the live view can be drawn on (tui.Console)
	ErrTTY  bool
	// Console is stdout's and stdin's console as the process found it: the live view switches
	// it to virtual-terminal processing (Windows), and every way out restores it. nil in tests.
	Console *tui.Console
	Getenv  func(string) string
	// Signals receives SIGINT and SIGTERM from the start of main (see earlySignals); nil in
	// tests that call run directly, where each command installs its own handling.
	Signals <-chan os.Signal
}

func newStreams() *streams {
	console := tui.OpenConsole(os.Stdout, os.Stdin)
	return &streams{
		In: os.Stdin, Out: os.Stdout, OutFile: os.Stdout, Err: os.Stderr,
		OutTTY:  console.Terminal(),
		ErrTTY:  tui.OpenConsole(os.Stderr, nil).Terminal(),
		Console: console,
		Getenv:  os.Getenv,
	}
}

// run executes the command line and returns the exit code. It is the one place where errors
// become exit codes and messages.
func run(args []string, s *streams) int {
	out := &stdoutErrors{w: s.Out}
	s.Out = out
	cmd := newRootCmd(s, nil)
	cmd.SetArgs(args)
	ran, err := cmd.ExecuteC()
	if err == nil && !streamsProgress(cmd, ran) {
		// A command whose output is its result (key, version, engine inspect, matrix list …)
		// that could not write it has failed: a full disk must not leave an empty key.txt with
		// exit 0. A build's progress is not its result: the build goes on (internal/outstream).
		err = out.failed()
	}
	if exitcode.IsClosedPipe(err) {
		// stdout's reader went away (`trtbuild inspect m.onnx | head -1`): stop quietly, with
		// the status a shell gives a command killed by SIGPIPE.
		return int(exitcode.ClosedPipe)
	}
	code := exitcode.Of(err)
	if err != nil && !exitcode.IsReported(err) {
		fmt.Fprintln(s.Err, "trtbuild: "+oneLine(err))
	}
	return int(code)
}

// oneLine keeps an error message on one line, with no control bytes (exitcode.OneLine).
func oneLine(err error) string { return exitcode.OneLine(err) }

// escapeControls makes a message safe on one line of output (pathtext.Line).
func escapeControls(s string) string { return pathtext.Line(s) }

// streamsProgress reports whether ran is one of the commands whose stdout is progress (a
// build, a matrix build or cell, a replay, the worker) rather than their result: a failed
// write of progress does not fail them (internal/outstream).
func streamsProgress(root, ran *cobra.Command) bool {
	switch strings.TrimPrefix(ran.CommandPath(), root.Name()) {
	case "", " replay", " " + builder.WorkerSubcommand, " matrix build", " matrix cell":
		return true
	case " mcp": // stdout is the MCP session; it cancels its builds on signals itself
		return true
	}
	return false
}

// stdoutErrors remembers the first error writing stdout.
type stdoutErrors struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (o *stdoutErrors) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// failed is the exit error for a write to stdout that failed, or nil.
func (o *stdoutErrors) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil || exitcode.IsClosedPipe(o.err) {
		return o.err
	}
	return exitcode.Wrap(exitcode.Failed, fmt.Errorf("writing the output to stdout: %v", exitcode.SyscallCause(o.err)))
}

// q quotes a file name for a message (internal/pathtext).
func q(name string) string { return pathtext.Q(name) }

// progressMode is the view --progress (flag) selects for this process's stdout, with
// TRTBUILD_PROGRESS and the terminal; a warning about the choice goes to stderr (once, when
// warn). Every command that shows progress selects it here.
func progressMode(s *streams, flag string, warn bool) (tui.Mode, error) {
	mode, warning, err := tui.SelectMode(flag, s.Getenv("TRTBUILD_PROGRESS"), s.OutTTY, s.Getenv("TERM"))
	if err != nil {
		return mode, exitcode.Wrap(exitcode.Usage, err)
	}
	if warning != "" && warn {
		fmt.Fprintln(s.Err, "trtbuild: "+escapeControls(warning))
	}
	return mode, nil
}
