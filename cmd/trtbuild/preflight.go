package main

import (
	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/preflight"
	"github.com/trtbuild/trtbuild/internal/shapes"
)

// shapeFlags are the parsed --shapes, --min-shapes, --opt-shapes and --max-shapes.
type shapeFlags struct {
	shapes, min, opt, max []shapes.Spec
}

func parseShapeFlags(o *buildOptions) (shapeFlags, error) {
	var f shapeFlags
	for _, x := range []struct {
		flag, value string
		dst         *[]shapes.Spec
	}{{"--shapes", o.shapes, &f.shapes}, {"--min-shapes", o.minShapes, &f.min}, {"--opt-shapes", o.optShapes, &f.opt}, {"--max-shapes", o.maxShapes, &f.max}} {
		if x.value == "" {
			continue
		}
		s, err := shapes.Parse(x.value)
		if err != nil {
			return f, exitcode.Usagef("invalid %s: %v", x.flag, err)
		}
		*x.dst = s
	}
	return f, nil
}

// minTensorRTOpset is the oldest ai.onnx opset the ONNX parser of TensorRT 10 and 11 supports
// (onnx-tensorrt's operator matrix: opset 9 and newer). The newest differs by release and is
// not checked: the parent never loads TensorRT to ask.
const minTensorRTOpset = 9

// checkModel reads the model's structure before any builder starts and applies the preflight
// rules (internal/preflight): a file that is not ONNX, shapes that do not fit the model's
// inputs, missing shapes for dynamic inputs and unsafe or missing external data are refused
// here, with exit status 2, before any GPU time is spent. The simulated builder gets the
// model's real node names. With skip (--no-preflight) only the node names are read, and a
// model trtbuild cannot read goes to the builder as it is.
func checkModel(model string, req *builder.Request, f shapeFlags, skip bool) (warnings []string, err error) {
	if skip {
		if m, err := onnx.ReadMetadata(model); err == nil {
			req.Layers = m.NodeNames()
		}
		return nil, nil
	}
	m, warnings, err := preflight.Run(model, preflight.Params{
		Shapes: f.shapes, Min: f.min, Opt: f.opt, Max: f.max, MinOpset: minTensorRTOpset,
	})
	if err != nil {
		return nil, err
	}
	req.Layers = m.NodeNames()
	return warnings, nil
}
