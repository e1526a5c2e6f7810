package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/trtbuild/trtbuild/internal/exitcode"
)

// streams are the process's standard files and environment, injected so tests can replace them.
type streams struct {
	In      *os.File
	Out     io.Writer
	OutFile *os.File // stdout as a file, for the live view
	Err     io.Writer
	OutTTY  bool // stdout is a terminal
	ErrTTY  bool
	Getenv  func(string) string
	// Signals receives SIGINT and SIGTERM from the start of main (see earlySignals); nil in
	// tests that call run directly, where each command installs its own handling.
	Signals chan os.Signal
}

func newStreams() *streams {
	return &streams{
		In: os.Stdin, Out: os.Stdout, OutFile: os.Stdout, Err: os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
		Getenv: os.Getenv,
	}
}

// run executes the command line and returns the exit code. It is the one place where errors
// become exit codes and messages.
func run(args []string, s *streams) int {
	cmd := newRootCmd(s)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if errors.Is(err, syscall.EPIPE) {
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

// oneLine keeps an error message on one line, with no control bytes: a file name in it cannot
// start a new line or a terminal escape sequence.
func oneLine(err error) string {
	msg := err.Error()
	var e *exitcode.Error
	if errors.As(err, &e) {
		msg = e.Err.Error()
	}
	return strings.Join(strings.Fields(escapeControls(msg)), " ")
}

// escapeControls writes control bytes other than space-like ones as \xNN escapes; tabs and
// newlines become spaces.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case isControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
