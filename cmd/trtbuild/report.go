package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/report"
	"github.com/trtbuild/trtbuild/internal/trace"
	"github.com/trtbuild/trtbuild/internal/tui"
)

// outputFlags are the build's --report and --trace files.
type outputFlags struct {
	report, trace string
}

func addOutputFlags(f *pflag.FlagSet, o *outputFlags) {
	f.StringVar(&o.report, "report", "", "write a build report to `FILE` when the build ends: .json (phase tree, slowest phases, cache hits, peak memory) or .html (the same, with a timeline chart)")
	f.StringVar(&o.trace, "trace", "", "record the progress events to `FILE` as JSON lines, for trtbuild replay and trtbuild report")
}

// outputs records a build for --report and --trace beside the renderer the user watches.
type outputs struct {
	flags    outputFlags
	recorder *report.Recorder
	trace    *os.File
	began    bool
}

// openOutputs checks --report's extension and creates the --trace file, before anything is
// built, so a mistake costs no build time.
func openOutputs(f outputFlags) (*outputs, error) {
	o := &outputs{flags: f}
	if f.report != "" {
		if _, err := report.FormatOf(f.report); err != nil {
			return nil, exitcode.Usagef("invalid --report: %v", err)
		}
		if err := checkWritableFolder(f.report); err != nil {
			return nil, exitcode.Usagef("cannot write --report %s: %v; choose a path in a writable folder", f.report, err)
		}
		o.recorder = report.NewRecorder()
	}
	if f.trace != "" {
		file, err := os.Create(f.trace)
		if err != nil {
			return nil, exitcode.Usagef("cannot write --trace %s: %v; choose a writable path", f.trace, unwrapPathError(err))
		}
		o.trace = file
	}
	return o, nil
}

// checkWritableFolder fails when path's folder does not exist or is not a folder.
func checkWritableFolder(path string) error {
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return unwrapPathError(err)
	}
	if !st.IsDir() {
		return errors.New("its folder is not a folder")
	}
	return nil
}

// wrap returns r with the recorders beside it.
func (o *outputs) wrap(r progress.Renderer) progress.Renderer {
	tee := progress.Tee{r}
	if o.recorder != nil {
		tee = append(tee, o.recorder)
	}
	if o.trace != nil {
		tee = append(tee, tui.NewJSON(o.trace, nil))
	}
	if len(tee) == 1 {
		return r
	}
	o.began = true
	return tee
}

// finish writes the report and closes the trace. Problems are warnings on errOut: the build's
// outcome stands. A trace file that never received the build (it failed to start) is removed.
func (o *outputs) finish(errOut io.Writer) {
	if o.trace != nil {
		if err := o.trace.Close(); err != nil {
			fmt.Fprintf(errOut, "trtbuild: warning: the trace %s may be incomplete: %v\n", o.flags.trace, err)
		}
		if !o.began {
			os.Remove(o.flags.trace)
		}
	}
	if o.recorder != nil && o.began {
		if err := report.WriteFile(o.flags.report, o.recorder.Report()); err != nil {
			fmt.Fprintf(errOut, "trtbuild: warning: no report written: %v\n", err)
		}
	}
}

func newReportCmd(s *streams) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report TRACE.jsonl [-o FILE.html|FILE.json]",
		Short: "Make a build report from a recorded trace",
		Long: `report reads a build recorded with --trace FILE or --progress json and writes the report
that --report would have written: a self-contained HTML page with a timeline of the phases, or
JSON. The format follows the output file's extension; the default output is the trace's name
with .html.`,
		Example: `  trtbuild model.onnx --trace build.jsonl
  trtbuild report build.jsonl -o build.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return reportRun(s, args[0], out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the report file, .html or .json (default: the trace's name with .html)")
	return cmd
}

func reportRun(s *streams, tracePath, out string) error {
	if out == "" {
		out = strings.TrimSuffix(tracePath, filepath.Ext(tracePath)) + ".html"
	}
	if _, err := report.FormatOf(out); err != nil {
		return exitcode.Usagef("invalid -o: %v", err)
	}
	tr, closeTrace, err := openTrace(tracePath)
	if err != nil {
		return err
	}
	defer closeTrace()
	r, err := report.FromReader(tr)
	if err != nil {
		return traceError(tracePath, err)
	}
	if err := report.WriteFile(out, r); err != nil {
		return exitcode.Wrap(exitcode.Failed, fmt.Errorf("%w; choose a writable path with -o", err))
	}
	fmt.Fprintf(s.Out, "Wrote %s\n", out)
	return nil
}

// openTrace opens a recorded trace for streaming, with errors that say what to do.
func openTrace(path string) (*trace.Reader, func(), error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, exitcode.Usagef("trace %s does not exist; record one with trtbuild --trace FILE or --progress json", path)
	case err != nil:
		return nil, nil, exitcode.Usagef("cannot read trace %s: %v", path, unwrapPathError(err))
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, nil, exitcode.Usagef("trace %s is a directory; give the .jsonl file", path)
	}
	return trace.NewReader(f), func() { f.Close() }, nil
}

// traceError says what went wrong reading a trace: a file that is not a trace at all is bad
// input (exit 2), a damaged trace a failure.
func traceError(path string, err error) error {
	if errors.Is(err, trace.ErrNotTrace) {
		return exitcode.Usagef("%s: this is not a trace recorded by --trace or --progress json; record one with trtbuild MODEL.onnx --trace build.jsonl", path)
	}
	return exitcode.Wrap(exitcode.Failed, fmt.Errorf("trace %s: %w", path, err))
}
