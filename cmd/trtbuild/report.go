package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"github.com/trtbuild/trtbuild/internal/regfile"
	"github.com/trtbuild/trtbuild/internal/report"
	"github.com/trtbuild/trtbuild/internal/trace"
)

// outputFlags are the build's --report and --trace files.
type outputFlags struct {
	report, trace string
}

func addOutputFlags(f *pflag.FlagSet, o *outputFlags) {
	f.StringVar(&o.report, "report", "", "write a build report to `FILE` when the build ends: .json (phase tree, slowest phases, cache hits, peak memory) or .html (the same, with a timeline chart)")
	f.StringVar(&o.trace, "trace", "", "record the progress events to `FILE` as JSON lines, for trtbuild replay and trtbuild report")
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
	target, err := builder.InspectOutput("-o", out, outpath.WholeFile)
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
		return nil, nil, exitcode.Usagef("cannot read trace %s: %v", q(path), exitcode.PathCause(err))
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
			return nil, exitcode.Usagef("cannot read report %s: %v", q(path), exitcode.PathCause(err))
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
