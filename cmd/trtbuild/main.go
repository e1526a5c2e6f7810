// Command trtbuild builds TensorRT engines from ONNX models, with live nested progress, clean
// cancellation, plain text for logs and JSON lines for machines. See README.md.
package main

import "os"

func main() {
	// First of all, before the command line is even parsed: from here on a Ctrl-C or SIGTERM
	// takes the documented path (exit 130 or 143) instead of killing the process, and a closed
	// stdout is an error to handle instead of a fatal SIGPIPE.
	sigs := earlySignals()
	s := newStreams()
	s.Signals = sigs
	// The console's modes are put back however run ends, a panic included (tui.Console).
	code := s.Console.Run(func() int { return run(os.Args[1:], s) })
	os.Exit(code)
}
