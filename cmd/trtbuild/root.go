package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/trtexec"
)

// commit is set at link time: -ldflags "-X main.commit=…" (the version is builder.Version).
var commit = ""

// newRootCmd is trtbuild's command line over s. runF, when not nil, is handed the build's
// options in place of running the build: the seam through which tests take argv to options in
// process, through every flag, spelling and check the command line has (run passes nil).
func newRootCmd(s *streams, runF func(builder.Options) error) *cobra.Command {
	o := &buildflags.Flags{}
	var showVersion bool
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
  source <(trtbuild completion bash)      # tab completion (also zsh, fish; see docs/usage.md)`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(c *cobra.Command, args []string) error {
			if showVersion {
				if len(args) > 0 {
					return exitcode.Usagef("--version takes no model (got %s)", strings.Join(args, " ")).Hintf("run 'trtbuild --version' alone")
				}
				return writeVersion(s, versionQuery{device: o.Opts.Device, libDir: o.Opts.TensorRTLib})
			}
			options := func() (builder.Options, error) {
				if err := commandTypo(c, args); err != nil {
					return builder.Options{}, err
				}
				return buildOptions(o, args)
			}
			if runF != nil {
				opts, err := options()
				if err != nil {
					return err
				}
				return runF(opts)
			}
			// The build of the command line, shown as --progress says (a refusal too).
			return runBuild(s, o.Progress, options)
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
	cmd.Flags().BoolVar(&showVersion, "version", false, "print what 'trtbuild version' prints, and exit")
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
	argErrorsAreUsage(cmd)
	refuseUnknownHelpTopics(cmd)
	return cmd
}

// flagError turns pflag's errors into one-line usage errors. A trtexec flag trtbuild does not
// take is never a bare "unknown flag": the message says why and what to use instead; a typo of
// one of c's flags names the flag meant.
func flagError(c *cobra.Command, err error) error {
	msg := strings.TrimSpace(err.Error())
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if why, ok := trtexec.Unsupported(name); ok {
			return exitcode.Usagef("%s", why)
		}
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if meant, ok := buildflags.Closest(name, names); ok {
			msg += " (did you mean --" + meant + "?)"
		}
		return exitcode.Usagef("%s", msg).Hintf("run '%s --help' for the flags", c.CommandPath())
	}
	return exitcode.Usagef("%s", msg).Hintf("run '%s --help' for usage", c.CommandPath())
}

// commandTypo refuses a build whose first argument is a typo of a subcommand of root
// (`trtbuild inpsect m.onnx`), which would otherwise be taken for a model; a file of that name
// is a model.
func commandTypo(root *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if _, err := os.Stat(args[0]); err == nil {
		return nil
	}
	if meant, ok := closestCommand(root, args[0]); ok {
		return exitcode.Usagef("unknown command %q (did you mean %q?)", args[0], meant).Hintf("run '%s --help' for the commands", root.CommandPath())
	}
	return nil
}

// closestCommand is the subcommand of c that name is a typo of (buildflags.Closest).
func closestCommand(c *cobra.Command, name string) (string, bool) {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() || sub.Name() == "help" {
			names = append(names, sub.Name())
			names = append(names, sub.Aliases...)
		}
	}
	return buildflags.Closest(name, names)
}

// argErrorsAreUsage makes the argument errors of c's subcommands usage errors (exit 2) that
// say what to run, naming the subcommand meant where the argument is a typo of one (`trtbuild
// matrix biuld`).
func argErrorsAreUsage(c *cobra.Command) {
	for _, sub := range c.Commands() {
		argErrorsAreUsage(sub)
		check := sub.Args
		if check == nil {
			continue
		}
		sub.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var coded *exitcode.Error
			if err == nil || errors.As(err, &coded) {
				return err
			}
			if cmd.HasAvailableSubCommands() && len(args) > 0 {
				hint := ""
				if meant, ok := closestCommand(cmd, args[0]); ok {
					hint = fmt.Sprintf(" (did you mean %q?)", meant)
				}
				return exitcode.Usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint).Hintf("run '%s --help' for the commands", cmd.CommandPath())
			}
			return exitcode.Usagef("%s", oneLine(err)).Hintf("run '%s --help' for usage", cmd.CommandPath())
		}
	}
}

// refuseUnknownHelpTopics makes `trtbuild help TOPIC` refuse a topic that names no command,
// in one line with the command meant where it is a typo (exit 2); cobra's own help command
// would show the root's help and exit 0. Its help and completion are kept.
func refuseUnknownHelpTopics(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, h := range root.Commands() {
		if h.Name() != "help" || h.Run == nil {
			continue
		}
		show := h.Run
		h.Run = nil
		h.RunE = func(c *cobra.Command, args []string) error {
			found, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				topic := strings.Join(args, " ")
				hint := ""
				if err == nil { // then rest is not empty: its first word names no subcommand of found
					if meant, ok := closestCommand(found, rest[0]); ok {
						hint = fmt.Sprintf(" (did you mean %q?)", strings.TrimSpace(strings.TrimPrefix(found.CommandPath()+" "+meant, root.Name())))
					}
				}
				return exitcode.Usagef("unknown help topic %q%s", topic, hint).Hintf("run '%s help' for the commands", root.CommandPath())
			}
			show(c, args)
			return nil
		}
	}
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
