package worker

import (
	"fmt"
	"os"

	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/convert"
	"github.com/trtbuild/trtbuild/internal/trt"
)

// converter writes the reduced-precision copy of the model with keep (--keep-fp32 entries)
// left in float32, and returns its path and the notes for the user.
type converter func(keep []string) (model string, notes []string, err error)

// precisionPath decides how the build honours --fp16, --bf16, --int8 and --fp8, and applies it
// to req: on TensorRT 10 they stay builder flags (with a deprecation notice); on TensorRT 11 an
// --fp16 or --bf16 build converts the ONNX graph into a temporary folder first and builds that,
// strongly typed, and convert is the conversion (the worker calls it, with the --keep-fp32
// list, once per build attempt; see buildKeepingFP32); --int8 and --fp8 there are errors that
// point to Q/DQ-quantized models. A simulated build takes the path of the major its stand-in
// plays, conversion and retry included (its --sim-fp16-fail-node failure honours the keep
// list, which the worker hands the stand-in too). notes go to the user as
// log lines; cleanup removes the temporary folder. convert is nil when nothing is converted.
func precisionPath(req *Request) (notes []string, convert converter, cleanup func(), err error) {
	cleanup = func() {}
	if !req.FP16 && !req.BF16 && !req.INT8 && !req.FP8 {
		return nil, nil, cleanup, nil
	}
	v, err := cgo.Version(cgo.BackendTensorRT, req.Device)
	if err != nil {
		return nil, nil, cleanup, err
	}
	loaded := v.Loaded
	if loaded == 0 {
		loaded = v.Compiled
	}
	version, err := trt.FromInt(loaded)
	if err != nil {
		return nil, nil, cleanup, err
	}
	plan, err := trt.PrecisionPlan(version.Major, req.FP16, req.BF16, req.INT8, req.FP8)
	if err != nil {
		return nil, nil, cleanup, err
	}
	if plan.Notice != "" {
		notes = append(notes, plan.Notice)
	}
	if plan.ConvertONNX == "" {
		if len(req.KeepFP32) > 0 {
			return nil, nil, cleanup, fmt.Errorf("--keep-fp32 applies when TensorRT 11 converts the model for --fp16/--bf16; TensorRT %s keeps the precision flags instead: "+
				"convert the model yourself (trtbuild convert --fp16 --keep-fp32-nodes ...) and build that without --fp16", version)
		}
		return notes, nil, cleanup, nil
	}
	c, cleanup, err := onnxConverter(req.Model, string(plan.ConvertONNX), version)
	if err != nil {
		return nil, nil, cleanup, err
	}
	req.FP16, req.BF16 = false, false
	return notes, c, cleanup, nil
}

// onnxConverter returns the conversion of model to target for a TensorRT 11 build: each call
// writes a new copy into its own folder under one temporary folder, which cleanup removes.
func onnxConverter(model, targetName string, version trt.Version) (converter, func(), error) {
	target, err := convert.ParseTarget(targetName)
	if err != nil {
		return nil, func() {}, err
	}
	dir, err := os.MkdirTemp("", "trtbuild-convert-")
	if err != nil {
		return nil, func() {}, fmt.Errorf("making a folder for the %s copy of the model: %w", target, err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	c := func(keep []string) (string, []string, error) {
		// A folder per attempt: the first attempt's copy is never overwritten while the
		// builder may still hold it open.
		attempt, err := os.MkdirTemp(dir, "attempt-")
		if err != nil {
			return "", nil, fmt.Errorf("making a folder for the %s copy of the model: %w", target, err)
		}
		out, summary, err := convert.ConvertFile(model, attempt, convert.Options{Target: target, Keep: keep})
		if err != nil {
			return "", nil, err
		}
		notes := []string{fmt.Sprintf("TensorRT %s has no %s builder flag: converted the ONNX graph to %s first "+
			"(%d nodes converted, %d kept in float32; trtbuild convert writes the same model to keep or inspect)",
			version, target, target, summary.Nodes.Converted, summary.Nodes.Kept)}
		if h := summary.Headline(); h != "" {
			notes = append(notes, h)
		}
		return out, append(notes, summary.Warnings...), nil
	}
	return c, cleanup, nil
}
