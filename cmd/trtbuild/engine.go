package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/inspect"
)

func newEngineCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Look at built engines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exitcode.Usagef("engine needs a subcommand: trtbuild engine inspect ENGINE")
		},
	}
	cmd.AddCommand(newEngineInspectCmd(s))
	return cmd
}

func newEngineInspectCmd(s *streams) *cobra.Command {
	var asJSON bool
	var expectTRT, expectKey string
	cmd := &cobra.Command{
		Use:   "inspect ENGINE",
		Short: "Say what an engine file is, without a GPU: its plan header and its manifest",
		Long: `engine inspect reads an engine file in pure Go: the TensorRT version that wrote it, from the
plan header (as trtexec --getPlanVersionOnly does), or that it is a simulated plan; and the
manifest beside it (ENGINE.json), if there is one: the build key and its parts, versions, shapes,
flags and build time. It checks that the manifest describes this file (its SHA-256).

With --expect-tensorrt or --expect-key it exits with status 1 when the engine does not match,
so CI can refuse a stale engine before deploying it.`,
		Example: `  trtbuild engine inspect model.engine
  trtbuild engine inspect model.engine --expect-tensorrt 10.16 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Usagef("engine inspect takes one engine file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := inspect.Engine(args[0])
			if err != nil {
				return err
			}
			r.Expect(expectTRT, expectKey)
			if asJSON {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				r.WriteText(s.Out)
			}
			if len(r.Problems) > 0 {
				return exitcode.Wrap(exitcode.Failed, fmt.Errorf("engine %s: %s", r.Engine, r.Problems[0]))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write one JSON document")
	cmd.Flags().StringVar(&expectTRT, "expect-tensorrt", "", "fail unless the plan was written by this TensorRT `VERSION` (10, 10.16, 10.16.0 or 10.16.0.32)")
	cmd.Flags().StringVar(&expectKey, "expect-key", "", "fail unless the manifest names this build `KEY`")
	return cmd
}
