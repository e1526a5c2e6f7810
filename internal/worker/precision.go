package worker

import (
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/convert"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// precisionPath decides how the build honours --fp16, --bf16, --int8 and --fp8, and applies it
// to req: on TensorRT 10 they stay builder flags (with a deprecation notice); on TensorRT 11 an
// --fp16 or --bf16 build converts the ONNX graph into a temporary folder first and builds that,
// strongly typed; --int8 and --fp8 there are errors that point to Q/DQ-quantized models. The
// simulated builder changes no precision and says which path TensorRT would take. notes go to
// the user as log lines; cleanup removes the temporary folder.
func precisionPath(req *Request) (notes []string, cleanup func(), err error) {
	cleanup = func() {}
	if !req.FP16 && !req.BF16 && !req.INT8 && !req.FP8 {
		return nil, cleanup, nil
	}
	if req.Backend != "tensorrt" {
		return []string{simPrecisionNote(req)}, cleanup, nil
	}
	v, err := cgo.Version(cgo.BackendTensorRT, req.Device)
	if err != nil {
		return nil, cleanup, err
	}
	loaded := v.Loaded
	if loaded == 0 {
		loaded = v.Compiled
	}
	version, err := trt.FromInt(loaded)
	if err != nil {
		return nil, cleanup, err
	}
	plan, err := trt.PrecisionPlan(version.Major, req.FP16, req.BF16, req.INT8, req.FP8)
	if err != nil {
		return nil, cleanup, err
	}
	if plan.Notice != "" {
		notes = append(notes, plan.Notice)
	}
	if plan.ConvertONNX == "" {
		if len(req.KeepFP32) > 0 {
			return nil, cleanup, fmt.Errorf("--keep-fp32 applies when TensorRT 11 converts the model for --fp16/--bf16; TensorRT %s keeps the precision flags instead: "+
				"convert the model yourself (trtbuild convert --fp16 --keep-fp32-nodes ...) and build that without --fp16", version)
		}
		return notes, cleanup, nil
	}
	target, err := convert.ParseTarget(string(plan.ConvertONNX))
	if err != nil {
		return nil, cleanup, err
	}
	dir, err := os.MkdirTemp("", "trtbuild-convert-")
	if err != nil {
		return nil, cleanup, fmt.Errorf("making a folder for the %s copy of the model: %w", target, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	keepOps, keepNodes := splitKeepFP32(req.KeepFP32)
	out, summary, err := convert.ConvertFile(req.Model, dir, convert.Options{Target: target, KeepOps: keepOps, KeepNodes: keepNodes})
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	notes = append(notes, fmt.Sprintf("TensorRT %s has no %s builder flag: converted the ONNX graph to %s first "+
		"(%d nodes converted, %d kept in float32; trtbuild convert writes the same model to keep or inspect)",
		version, target, target, summary.Nodes.Converted, summary.Nodes.Kept))
	notes = append(notes, summary.Warnings...)
	req.Model = out
	req.FP16, req.BF16 = false, false
	return notes, cleanup, nil
}

func simPrecisionNote(req *Request) string {
	return "the simulated builder does not change precision; with TensorRT 10, --fp16/--bf16/--int8/--fp8 set the (deprecated) builder flags; " +
		"with TensorRT 11, --fp16/--bf16 convert the ONNX graph first (as trtbuild convert does) and --int8/--fp8 need a Q/DQ-quantized model"
}
