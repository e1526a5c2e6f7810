package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/report"
)

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
					return exitcode.Usagef("report --diff prints its table").Hintf("leave out -o")
				}
				return reportDiff(s, args[0], args[1])
			}
			written, err := report.WriteFromTrace(args[0], out)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Wrote %s\n", q(written))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the report file, .html or .json (default: the trace's name with .html)")
	cmd.Flags().BoolVar(&diff, "diff", false, "compare two builds (traces or JSON reports): time per stage, timing-cache hits, engine size")
	return cmd
}

// reportDiff prints how two builds compare.
func reportDiff(s *streams, pathA, pathB string) error {
	a, err := report.Load(pathA)
	if err != nil {
		return err
	}
	b, err := report.Load(pathB)
	if err != nil {
		return err
	}
	return report.WriteDiff(s.Out, filepath.Base(pathA), a, filepath.Base(pathB), b)
}
