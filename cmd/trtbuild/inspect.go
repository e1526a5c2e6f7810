package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildflags"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/inspect"
	"github.com/trtbuild/trtbuild/internal/parserops"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// inspectOwnFlags are inspect's flags; every other flag it takes is a build flag, for --check.
var inspectOwnFlags = map[string]bool{"json": true, "check": true, "tensorrt-version": true, "help": true}

// inspectShownBuildFlags are the build flags inspect's help lists; it takes the others too.
var inspectShownBuildFlags = map[string]bool{"shapes": true, "min-shapes": true, "opt-shapes": true, "max-shapes": true, "profile": true}

// newInspectCmd returns `trtbuild inspect MODEL [--json]`, which describes a model without
// starting TensorRT, and `trtbuild inspect --check MODEL [build flags]`, the CI gate. A file
// that cannot be read as ONNX exits with status 2; a check that finds a reason exits with 1.
func newInspectCmd(stdout io.Writer) *cobra.Command {
	var asJSON, check bool
	var trtMajor int
	build := &buildflags.Flags{}
	cmd := &cobra.Command{
		Use:   "inspect MODEL.onnx | inspect --check MODEL.onnx [build flags]",
		Short: "Describe an ONNX model: inputs, operators, weights, external data and the shapes a build needs",
		Long: `inspect reads an ONNX model's structure without its weights, so it takes milliseconds even
for models of many gigabytes, and shows: IR version, opsets, producer and graph name; inputs and
outputs with element types and dimensions (named dynamic dimensions as names); node count and
operators; initializers and their size; external data files and whether each is present and
large enough; operators from custom domains, which need TensorRT plugins; and, for dynamic
inputs, example --min-shapes/--opt-shapes/--max-shapes flags for a build.

--check is a gate for CI: given the model and the build's flags (the shape flags, and any other
build flag), it applies the build's own preflight and exits 0 when the build would start and
nothing looks likely to fail, or prints the reasons, one line each, and exits 1: a build that
would be refused (shapes missing, not fitting, or impossible: an opt or max size of 0, more than
2^63-1 elements; external data missing or outside the model's folder; bad flags), inputs of more
than 2^31-1 elements, which many TensorRT layers cannot index, and operators the ONNX parser of
the targeted TensorRT does not import (onnx-tensorrt's operator list). It needs no TensorRT and
no GPU. Exit status 2 means the model could not be read.`,
		Example: `  trtbuild inspect testdata/models/convnet.onnx
  trtbuild inspect model.onnx --json | jq .inputs
  trtbuild inspect --check model.onnx --shapes images:8x3x224x224`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Usagef("inspect takes one model file, got %d arguments", len(args)).Hintf("run 'trtbuild inspect --help' for usage")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !check {
				if name := changedBuildFlag(cmd.Flags()); name != "" {
					return exitcode.Usagef("--%s is a build flag, which inspect takes only with --check (is this build going to work?)", name).Hintf("add --check, or leave --%s out", name)
				}
				if cmd.Flags().Changed("tensorrt-version") {
					return exitcode.Usagef("--tensorrt-version picks the operator list --check uses").Hintf("add --check, or leave it out")
				}
				return inspect.Model(stdout, args[0], asJSON)
			}
			return inspectCheck(stdout, build, args[0], trtMajor, asJSON)
		},
	}
	f := cmd.Flags()
	f.SetNormalizeFunc(buildflags.Normalize)
	buildflags.Bind(f, build)
	f.VisitAll(func(fl *pflag.Flag) {
		if !inspectShownBuildFlags[fl.Name] {
			fl.Hidden = true
		}
	})
	f.BoolVar(&asJSON, "json", false, "write one JSON document (schema in internal/inspect, field \"v\" is its version)")
	f.BoolVar(&check, "check", false, "exit 0 when a build with these flags would start and nothing looks likely to fail, else print the reasons and exit 1")
	f.IntVar(&trtMajor, "tensorrt-version", 0, "with --check, the TensorRT major version (10 or 11) whose ONNX parser's operators to check against (default: the one trtbuild was compiled against, else 10)")
	return cmd
}

// changedBuildFlag names a build flag given on the command line, or "".
func changedBuildFlag(f *pflag.FlagSet) string {
	name := ""
	f.Visit(func(fl *pflag.Flag) {
		if name == "" && !inspectOwnFlags[fl.Name] {
			name = fl.Name
		}
	})
	return name
}

// inspectCheck runs `inspect --check`: the build's preflight with the build flags, then the
// risks, against the operator list of TensorRT major (0: 10, the newest whose list onnx-tensorrt
// publishes; --tensorrt-version 11 applies 11's refusals).
func inspectCheck(stdout io.Writer, build *buildflags.Flags, model string, major int, asJSON bool) error {
	if major == 0 {
		major = 10
	}
	ops, note, err := parserops.For(major)
	if err != nil {
		return exitcode.Usagef("invalid --tensorrt-version %d: %v", major, err)
	}
	opts, err := buildOptions(build, []string{model})
	if err != nil {
		return err
	}
	c, err := inspect.NewCheck(opts.Model, func() ([]shapes.Profile, []string, error) {
		p, err := builder.Preflight(opts)
		return p.Profiles, p.Warnings, err
	}, ops, note)
	if err != nil {
		return err
	}
	if asJSON {
		err = c.WriteJSON(stdout)
	} else {
		err = c.WriteText(stdout)
	}
	if err != nil {
		return fmt.Errorf("inspect --check: %w", err)
	}
	return c.Err()
}
