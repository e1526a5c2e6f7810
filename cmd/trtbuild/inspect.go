package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/inspect"
)

// newInspectCmd returns `trtbuild inspect MODEL [--json]`, which describes a model without
// starting TensorRT. A file that cannot be read as ONNX exits with status 2.
func newInspectCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect MODEL.onnx",
		Short: "Describe an ONNX model: inputs, operators, weights, external data and the shapes a build needs",
		Long: `inspect reads an ONNX model's structure without its weights, so it takes milliseconds even
for models of many gigabytes, and shows: IR version, opsets, producer and graph name; inputs and
outputs with element types and dimensions (named dynamic dimensions as names); node count and
operators; initializers and their size; external data files and whether each is present and
large enough; operators from custom domains, which need TensorRT plugins; and, for dynamic
inputs, example --min-shapes/--opt-shapes/--max-shapes flags for a build.`,
		Example: `  trtbuild inspect testdata/models/convnet.onnx
  trtbuild inspect model.onnx --json | jq .inputs`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Usagef("inspect takes one model file, got %d arguments; run 'trtbuild inspect --help' for usage", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return inspect.Model(stdout, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write one JSON document (schema in internal/inspect, field \"v\" is its version)")
	return cmd
}
