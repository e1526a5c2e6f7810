package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// commit is set at link time: -ldflags "-X main.commit=…" (the version is builder.Version).
var commit = ""

func newRootCmd(s *streams) *cobra.Command {
	o := &buildflags.Flags{}
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
  trtbuild model.onnx --progress json > build.jsonl
  trtbuild --backend sim --sim-scenario silence testdata/models/convnet.onnx   # also fail, crash, slow-cancel
  trtbuild model.onnx --iterations=100    # a trtexec-only flag: one line says what to run instead
  source <(trtbuild completion bash)      # tab completion (also zsh, fish; see README)`,
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
		if streamsProgress(cmd, c) {
			return nil // they cancel on signals themselves
		}
		return exitOnSignal(s)
	}
	cmd.Flags().SetNormalizeFunc(buildflags.Normalize)
	cmd.SetFlagErrorFunc(flagError)
	buildflags.Bind(cmd.Flags(), o)
	addCompletions(cmd, o)
	cmd.AddCommand(
		newInspectCmd(s.Out),
		newConvertCmd(s),
		newReplayCmd(s),
		newReportCmd(s),
		newVersionCmd(s),
		newKeyCmd(s),
		newEngineCmd(s),
		newMatrixCmd(s),
		newMCPCmd(s),
		newServeCmd(s),
		newWorkerCmd(),
		newProbeCmd(),
	)
	return cmd
}

// flagError turns pflag's errors into one-line usage errors. A trtexec flag trtbuild does not
// take is never a bare "unknown flag": the message says why and what to use instead.
func flagError(c *cobra.Command, err error) error {
	msg := strings.TrimSpace(err.Error())
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if why, ok := trtexec.Unsupported(name); ok {
			return exitcode.Usagef("%s", why)
		}
	}
	return exitcode.Usagef("%s; run '%s --help' for usage", msg, c.CommandPath())
}

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    builder.WorkerSubcommand,
		Short:  "run a build for a trtbuild parent process (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ignoreSignals()
			if err := builder.ServeWorker(); err != nil {
				return fmt.Errorf("build worker: %w", err)
			}
			return nil
		},
	}
}
