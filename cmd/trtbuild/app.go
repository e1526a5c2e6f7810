package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
	code := exitcode.Of(err)
	if err != nil && !exitcode.IsReported(err) {
		fmt.Fprintln(s.Err, "trtbuild: "+oneLine(err))
	}
	return int(code)
}

// oneLine keeps an error message on one line.
func oneLine(err error) string {
	msg := err.Error()
	var e *exitcode.Error
	if errors.As(err, &e) {
		msg = e.Err.Error()
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
}
