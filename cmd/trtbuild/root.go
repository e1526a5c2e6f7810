package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/worker"
)

// version and commit are set at link time: -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

func newRootCmd(s *streams) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "trtbuild [flags] MODEL.onnx",
		Short: "Build a TensorRT engine from an ONNX model, with live progress and clean cancel",
		Long: `trtbuild builds a TensorRT engine from an ONNX model, as trtexec does, and shows the
builder's progress as it happens: a live tree of phases on a terminal, plain lines in a log,
JSON lines for programs. Ctrl-C cancels at the builder's next step boundary; a second Ctrl-C
stops at once. The engine file is replaced only when a build succeeds.

trtexec's flag spellings are accepted too (--onnx=, --saveEngine=, --minShapes= …).`,
		Example: `  trtbuild --backend sim testdata/models/convnet.onnx     # simulated build, no GPU needed
  trtbuild model.onnx --fp16 -o model.engine
  trtbuild model.onnx --min-shapes images:1x3x224x224 --opt-shapes images:8x3x224x224 --max-shapes images:32x3x224x224
  trtbuild model.onnx --progress json > build.jsonl`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return buildRun(s, o, args)
		},
	}
	cmd.SetOut(s.Out)
	cmd.SetErr(s.Err)
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		switch c.Name() {
		case cmd.Name(), "replay", worker.Subcommand:
			return nil // they handle the signals themselves
		}
		return releaseSignals(s.Signals)
	}
	cmd.Flags().SetNormalizeFunc(normalizeFlagName)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitcode.Usagef("%s; run '%s --help' for usage", strings.TrimSpace(err.Error()), c.CommandPath())
	})
	addBuildFlags(cmd, o)
	cmd.AddCommand(
		newInspectCmd(s.Out),
		newConvertCmd(s),
		newReplayCmd(s),
		newReportCmd(s),
		newVersionCmd(s),
		newKeyCmd(s),
		newEngineCmd(s),
		newMatrixCmd(s),
		newWorkerCmd(),
	)
	return cmd
}

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    worker.Subcommand,
		Short:  "run a build for a trtbuild parent process (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ignoreSignals()
			if err := worker.ServeFiles(); err != nil {
				return fmt.Errorf("build worker: %w", err)
			}
			return nil
		},
	}
}
