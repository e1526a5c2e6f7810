package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trtbuild/trtbuild/internal/convert"
	"github.com/trtbuild/trtbuild/internal/exitcode"
)

type convertOptions struct {
	fp16, bf16 bool
	output     string
	keepOps    []string
	keepNodes  []string
	keep       []string
	keepIO     bool
	asJSON     bool
	strict     bool
}

// newConvertCmd returns `trtbuild convert --fp16|--bf16 MODEL -o OUT`, which writes a copy of
// an ONNX model with its float32 values converted, for TensorRT 11's strongly typed builds.
func newConvertCmd(s *streams) *cobra.Command {
	o := &convertOptions{keepIO: true}
	cmd := &cobra.Command{
		Use:   "convert (--fp16 | --bf16) MODEL.onnx [-o OUT.onnx]",
		Short: "Convert an ONNX model's float32 values to float16 or bfloat16 (what --fp16 does on TensorRT 11)",
		Long: `convert writes a copy of an ONNX model whose float32 weights, constants and values are
float16 (--fp16) or bfloat16 (--bf16). TensorRT 11 builds every network strongly typed and has
no FP16 builder flag, so a reduced-precision engine needs such a model; 'trtbuild MODEL --fp16'
does the same conversion by itself on TensorRT 11.

Numerically sensitive operators (reductions, exponentials, softmax, normalizations, top-k,
random generators; see --keep-fp32-ops), operators with no float16/bfloat16 version, nodes
that read weights too large for the target type, and the nodes and operators named in
--keep-fp32 stay in float32, with Cast nodes around them. A model already in the target type
is left alone: convert says there is nothing to do and writes no file. Nodes that stay float32
only because the model's opset is too old (Conv has no bfloat16 before opset 22) are counted in
a warning before anything is written; --strict-precision refuses such a model instead. Inputs and outputs
keep their types unless --keep-io-types=false. The summary says what was converted and kept,
and why; docs/convert.md has the rules.

The output is written atomically and never over the input. Models with external data get an
external data file next to the output (OUT.onnx.data).`,
		Example: `  trtbuild convert --fp16 model.onnx -o model.fp16.onnx
  trtbuild convert --bf16 model.onnx --keep-fp32 Gemm,/head/MatMul
  trtbuild convert --fp16 model.onnx --json | jq .kept_nodes`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Usagef("convert takes one model file, got %d arguments", len(args)).Hintf("run 'trtbuild convert --help' for usage")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return convertRun(s, o, args[0])
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.fp16, "fp16", false, "convert float32 to float16")
	f.BoolVar(&o.bf16, "bf16", false, "convert float32 to bfloat16 (needs opset 13 or newer)")
	f.StringVarP(&o.output, "output", "o", "", "the converted model (default: MODEL.fp16.onnx or MODEL.bf16.onnx next to the input)")
	f.StringSliceVar(&o.keepOps, "keep-fp32-ops", nil, "operator types to keep in float32, in addition to the default list: "+joinOps(convert.DefaultKeepOps()))
	f.StringSliceVar(&o.keepNodes, "keep-fp32-nodes", nil, "names of nodes to keep in float32")
	f.StringSliceVar(&o.keep, "keep-fp32", nil, "nodes (by name) and operator types to keep in float32, mixed: NODE_OR_OP,...")
	f.BoolVar(&o.keepIO, "keep-io-types", true, "keep the model's float32 inputs and outputs; false converts them too")
	f.BoolVar(&o.strict, "strict-precision", false, "refuse (exit 2, nothing written) when nodes would stay float32 only because the model's opset is too old for the target type (Conv needs opset 22 for bfloat16)")
	f.BoolVar(&o.asJSON, "json", false, "write the summary as one JSON document (schema in docs/convert.md)")
	return cmd
}

func joinOps(ops []string) string {
	s := ""
	for i, op := range ops {
		if i > 0 {
			s += ","
		}
		s += op
	}
	return s
}

func convertRun(s *streams, o *convertOptions, in string) error {
	var targetType convert.Target
	switch {
	case o.fp16 && o.bf16:
		return exitcode.Usagef("--fp16 and --bf16 together: a model is converted to one type, so pick one")
	case o.fp16:
		targetType = convert.FP16
	case o.bf16:
		targetType = convert.BF16
	default:
		return exitcode.Usagef("convert needs a target type: add --fp16 or --bf16")
	}
	m, out, err := convert.OpenFiles(in, o.output, targetType)
	if err != nil {
		return err
	}
	sum, err := convert.Convert(m, convert.Options{Target: targetType, KeepOps: o.keepOps, KeepNodes: o.keepNodes, Keep: o.keep, ConvertIO: !o.keepIO})
	if err != nil {
		if errors.Is(err, convert.ErrInternal) {
			return fmt.Errorf("converting %s: %w", in, err)
		}
		return exitcode.Usagef("cannot convert %s to %s: %v", q(in), targetType, err)
	}
	if sum.AlreadyTarget {
		// Nothing to convert: say so and write nothing (no copy to confuse
		// with a converted model).
		if o.asJSON {
			b, err := sum.JSON()
			if err != nil {
				return err
			}
			_, err = s.Out.Write(b)
			return err
		}
		_, err := fmt.Fprintf(s.Out, "nothing to convert: %s has no float32 values to change to %s (float32 inputs and outputs cast at the boundary are kept); no file written, use the model as it is\n", q(in), targetType)
		return err
	}
	// What stays in float32, and every warning, is said before anything is written; with
	// --strict-precision a model the opset keeps partly in float32 is refused instead.
	if h := sum.Headline(); h != "" {
		if o.strict {
			return exitcode.Usagef("--strict-precision: %s", h).Hintf("nothing written")
		}
		fmt.Fprintln(s.Err, "trtbuild: warning: "+escapeControls(h))
	}
	for _, w := range sum.Warnings {
		fmt.Fprintln(s.Err, "trtbuild: warning: "+escapeControls(w))
	}
	files, err := convert.Write(m, out, convert.OutputUse(o.output))
	if err != nil {
		if errors.Is(err, convert.ErrWouldOverwrite) {
			return exitcode.Wrap(exitcode.Usage, err)
		}
		return fmt.Errorf("writing the converted model: %w", err)
	}
	sum.Files = files
	if o.asJSON {
		b, err := sum.JSON()
		if err != nil {
			return err
		}
		_, err = s.Out.Write(b)
		return err
	}
	fmt.Fprintf(s.Out, "converted %s to %s\n", q(in), targetType)
	return sum.WriteText(s.Out)
}
