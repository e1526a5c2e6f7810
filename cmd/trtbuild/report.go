package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/outstream"
	"github.com/trtbuild/trtbuild/internal/progress"
	"github.com/trtbuild/trtbuild/internal/regfile"
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
	report   *outpath.Pending // created at the start, in its folder as it was then
	trace    *outpath.Stream
	traceOut *outstream.Writer // writes to trace without blocking the build
	began    bool
	done     bool
}

// openOutputs checks --report's extension and opens the --trace output (its paths were
// checked by checkBuildPaths), before anything is built, so a mistake costs no build time. A
// regular --trace file is written beside its target and put in place when the build ends; a
// FIFO or device is written as the build goes.
func openOutputs(f outputFlags, paths *buildPaths) (*outputs, error) {
	o := &outputs{flags: f}
	if f.report != "" {
		if _, err := report.FormatOf(f.report); err != nil {
			return nil, exitcode.Usagef("invalid --report: %v", err)
		}
		o.recorder = report.NewRecorder()
		if paths != nil && paths.report != nil {
			p, err := outpath.Create(*paths.report)
			if err != nil {
				return nil, exitcode.Usagef("cannot write --report %s: %v", q(f.report), unwrapPathError(err))
			}
			o.report = p
		}
	}
	if f.trace != "" && paths != nil && paths.trace != nil {
		st, err := outpath.OpenStream(*paths.trace)
		if err != nil {
			return nil, exitcode.Usagef("cannot write --trace %s: %v", q(f.trace), unwrapPathError(err))
		}
		o.trace = st
		o.traceOut = outstream.New(st, outstream.Options{})
	}
	return o, nil
}

// wrap returns r with the recorders beside it.
func (o *outputs) wrap(r progress.Renderer) progress.Renderer {
	tee := progress.Tee{r}
	if o.recorder != nil {
		tee = append(tee, o.recorder)
	}
	if o.trace != nil {
		tee = append(tee, tui.NewJSON(o.traceOut, nil))
	}
	if len(tee) == 1 {
		return r
	}
	o.began = true
	return tee
}

// finish puts the trace in place and writes the report. Problems are warnings on errOut: the
// build's outcome stands. A trace that never received the build (it failed to start) is
// dropped, and an old file at its path stays. A signal stops waiting for a slow --trace reader
// (a FIFO or a device; a file never waits): it is returned, for the caller to answer.
func (o *outputs) finish(errOut io.Writer, sigs <-chan os.Signal) (late os.Signal) {
	o.done = true
	if o.trace != nil {
		if o.trace.ToFile() {
			sigs = nil
		}
		stop, end := stopOnSignal(sigs)
		n, err := o.traceOut.Close(outputStall, stop)
		late = end()
		switch {
		case !o.began:
			o.trace.Cleanup() //nolint:errcheck // nothing was recorded
		case err != nil || n > 0:
			o.trace.Cleanup() //nolint:errcheck // a FIFO or device: nothing to undo
			fmt.Fprintf(errOut, "trtbuild: warning: the trace %s is incomplete: %s\n", q(o.flags.trace), traceProblem(err, n))
		default:
			if err := o.trace.Commit(); err != nil {
				fmt.Fprintf(errOut, "trtbuild: warning: no trace written: %v\n", err)
			}
		}
	}
	if o.recorder != nil && o.began && o.report != nil {
		if err := o.writeReport(); err != nil {
			fmt.Fprintf(errOut, "trtbuild: warning: no report written: %v\n", err)
		}
	}
	return late
}

// writeReport renders the report into its pending file and puts it in place.
func (o *outputs) writeReport() error {
	format, err := report.FormatOf(o.flags.report)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, format, o.recorder.Report()); err != nil {
		return err
	}
	if _, err := o.report.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", q(o.flags.report), unwrapPathError(err))
	}
	return o.report.CloseAtomicallyReplace()
}

func traceProblem(err error, unwritten int64) string {
	if err != nil {
		return unwrapSyscall(err).Error()
	}
	return fmt.Sprintf("its reader stopped reading, %d bytes were not written", unwritten)
}

// cleanup drops what finish did not put in place (a build that never started).
func (o *outputs) cleanup() {
	if o.report != nil {
		o.report.Cleanup() //nolint:errcheck // a no-op once committed
	}
	if !o.done && o.trace != nil {
		stop := make(chan struct{})
		close(stop)
		o.traceOut.Close(0, stop) //nolint:errcheck // dropped
		o.trace.Cleanup()         //nolint:errcheck // nothing to keep
	}
}

func newReportCmd(s *streams) *cobra.Command {
	var out string
	var diff bool
	cmd := &cobra.Command{
		Use:   "report TRACE.jsonl [-o FILE.html|FILE.json]",
		Short: "Make a build report from a recorded trace",
		Long: `report reads a build recorded with --trace FILE or --progress json and writes the report
that --report would have written: a self-contained HTML page with a timeline of the phases, or
JSON. The format follows the output file's extension; the default output is the trace's name
with .html.`,
		Example: `  trtbuild model.onnx --trace build.jsonl
  trtbuild report build.jsonl -o build.html
  trtbuild report --diff before.jsonl after.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if diff {
				if len(args) != 2 {
					return exitcode.Usagef("report --diff compares two builds: give two traces (or JSON reports), like trtbuild report --diff before.jsonl after.jsonl")
				}
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if diff {
				if out != "" {
					return exitcode.Usagef("report --diff prints its table; leave out -o")
				}
				return reportDiff(s, args[0], args[1])
			}
			return reportRun(s, args[0], out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the report file, .html or .json (default: the trace's name with .html)")
	cmd.Flags().BoolVar(&diff, "diff", false, "compare two builds (traces or JSON reports): time per stage, timing-cache hits, engine size")
	return cmd
}

func reportRun(s *streams, tracePath, out string) error {
	if out == "" {
		out = strings.TrimSuffix(tracePath, filepath.Ext(tracePath)) + ".html"
	}
	if _, err := report.FormatOf(out); err != nil {
		return exitcode.Usagef("invalid -o: %v", err)
	}
	target, err := inspectOutput("-o", out, outpath.WholeFile)
	if err != nil {
		return err
	}
	if in, err := outpath.Inspect(tracePath); err == nil && in.Info != nil {
		if err := outpath.Conflicts([]outpath.Named{{Name: "-o", Target: target}}, []outpath.Named{{Name: "the trace", Target: in}}); err != nil {
			return exitcode.Usagef("%v", err)
		}
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
	fmt.Fprintf(s.Out, "Wrote %s\n", q(out))
	return nil
}

// openTrace opens a recorded trace for streaming, with errors that say what to do. Only a
// regular file is read: a FIFO or device would block or never end.
func openTrace(path string) (*trace.Reader, func(), error) {
	f, _, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, exitcode.Usagef("trace %s does not exist; record one with trtbuild --trace FILE or --progress json", q(path))
	case errors.As(err, &nr) && nr.Kind == outpath.Dir:
		return nil, nil, exitcode.Usagef("trace %s is a directory; give the .jsonl file", q(path))
	case errors.As(err, &nr):
		return nil, nil, exitcode.Usagef("trace %s is %s, not a file; save the trace to a file first", q(path), nr.Kind)
	case err != nil:
		return nil, nil, exitcode.Usagef("cannot read trace %s: %v", q(path), unwrapPathError(err))
	}
	return trace.NewReader(f), func() { f.Close() }, nil
}

// traceError says what went wrong reading a trace: a file that is not a trace at all is bad
// input (exit 2), a damaged trace a failure.
func traceError(path string, err error) error {
	if errors.Is(err, trace.ErrNotTrace) {
		return exitcode.Usagef("%s: this is not a trace recorded by --trace or --progress json; record one with trtbuild MODEL.onnx --trace build.jsonl", q(path))
	}
	return exitcode.Wrap(exitcode.Failed, fmt.Errorf("trace %s: %w", q(path), err))
}

// reportDiff prints how two builds compare.
func reportDiff(s *streams, pathA, pathB string) error {
	a, err := loadReport(pathA)
	if err != nil {
		return err
	}
	b, err := loadReport(pathB)
	if err != nil {
		return err
	}
	return report.WriteDiff(s.Out, filepath.Base(pathA), a, filepath.Base(pathB), b)
}

// loadReport reads a build as a trace, or as a JSON report written by --report FILE.json.
func loadReport(path string) (*report.Report, error) {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, exitcode.Usagef("cannot read report %s: %v", q(path), unwrapPathError(err))
		}
		var r report.Report
		if err := json.Unmarshal(data, &r); err != nil || r.Version == 0 {
			return nil, exitcode.Usagef("%s is not a JSON report written by --report FILE.json; give a trace or such a report", q(path))
		}
		return &r, nil
	}
	tr, closeTrace, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	defer closeTrace()
	r, err := report.FromReader(tr)
	if err != nil {
		return nil, traceError(path, err)
	}
	return r, nil
}
