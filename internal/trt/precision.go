package trt

import (
	"errors"
	"fmt"
	"strings"
)

// Precision is a set of reduced-precision requests (--fp16, --bf16, --int8, --fp8). Its bits
// have the values of trtb_precision in internal/cgo/trtb.h, so a Plan's BuilderFlags can be
// handed to the builder unchanged.
type Precision uint32

// The precision requests. Values match TRTB_PRECISION_* in internal/cgo/trtb.h.
const (
	FP16 Precision = 1 << 0
	BF16 Precision = 1 << 1
	INT8 Precision = 1 << 2
	FP8  Precision = 1 << 3
)

// precisionFlags lists every request in the order messages name them.
var precisionFlags = []struct {
	bit        Precision
	flag, name string
}{
	{FP16, "--fp16", "FP16"},
	{BF16, "--bf16", "BF16"},
	{INT8, "--int8", "INT8"},
	{FP8, "--fp8", "FP8"},
}

// String names the requests as their command-line flags, for example "--fp16 and --int8".
func (p Precision) String() string {
	var names []string
	for _, f := range precisionFlags {
		if p&f.bit != 0 {
			names = append(names, f.flag)
		}
	}
	return joinAnd(names)
}

// typeNames names the requested types, for example "INT8 and FP8".
func (p Precision) typeNames() string {
	var names []string
	for _, f := range precisionFlags {
		if p&f.bit != 0 {
			names = append(names, f.name)
		}
	}
	return joinAnd(names)
}

func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	default:
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
}

// DataType is a low-precision type an ONNX model can be converted to before it is built.
type DataType string

// Conversion targets for Plan.ConvertONNX.
const (
	TypeFP16 DataType = "fp16"
	TypeBF16 DataType = "bf16"
)

// Errors that PrecisionPlan wraps, for callers that map them to exit codes.
var (
	// ErrUnsupportedVersion: the TensorRT major version is one trtbuild cannot drive.
	ErrUnsupportedVersion = errors.New("unsupported TensorRT version")
	// ErrPrecisionUnsupported: the requested precision does not exist as a build option in
	// this TensorRT version.
	ErrPrecisionUnsupported = errors.New("precision flag not supported")
)

// Plan says how one TensorRT major version honours a set of precision requests.
type Plan struct {
	// StronglyTyped tells whether the network is created strongly typed: every tensor keeps
	// the type the model gives it. Always true on TensorRT 11, which has no other mode; on
	// 10.x true unless a precision builder flag is set, because TensorRT 10 refuses those
	// flags on strongly typed networks.
	StronglyTyped bool
	// BuilderFlags are the TensorRT 10 builder flags to set (kFP16, kBF16, kINT8, kFP8).
	// Always zero on TensorRT 11, where these flags were removed.
	BuilderFlags Precision
	// ConvertONNX, when not empty, is the type the ONNX model must be converted to before
	// TensorRT 11 builds it (the worker converts it with internal/convert).
	ConvertONNX DataType
	// Notice is a one-line message for the user (a deprecation), or empty.
	Notice string
}

// PrecisionPlan decides how a build on TensorRT major version major honours --fp16, --bf16,
// --int8 and --fp8:
//
//   - 10.x: they map to the builder flags of the same names on a weakly typed network, with a
//     one-line notice that weak typing is deprecated and removed in TensorRT 11.
//   - 11.x and later: --fp16 or --bf16 asks for the model to be converted (ConvertONNX);
//     asking for both is an error. --int8 and --fp8 are errors that point to Q/DQ-quantized
//     models, the only way TensorRT 11 builds those precisions.
//
// Versions before 10 are refused.
func PrecisionPlan(major int, fp16, bf16, int8, fp8 bool) (Plan, error) {
	var req Precision
	for _, r := range []struct {
		on  bool
		bit Precision
	}{{fp16, FP16}, {bf16, BF16}, {int8, INT8}, {fp8, FP8}} {
		if r.on {
			req |= r.bit
		}
	}
	switch {
	case major < 10:
		return Plan{}, fmt.Errorf("%w: TensorRT %d is too old; trtbuild needs TensorRT 10 or 11", ErrUnsupportedVersion, major)
	case major == 10:
		return plan10(req), nil
	default:
		return plan11(major, req)
	}
}

func plan10(req Precision) Plan {
	if req == 0 {
		return Plan{StronglyTyped: true}
	}
	notice := fmt.Sprintf("%s: weakly typed builds are deprecated since TensorRT 10.12 and removed in 11", req)
	switch {
	case req&(INT8|FP8) == 0:
		notice += "; convert the model with ModelOpt AutoCast instead (python -m modelopt.onnx.autocast)"
	default:
		notice += "; quantize the model with Q/DQ nodes instead (python -m modelopt.onnx.quantization); " +
			"without them TensorRT has no scales and keeps those layers in higher precision"
	}
	return Plan{BuilderFlags: req, Notice: notice}
}

func plan11(major int, req Precision) (Plan, error) {
	if q := req & (INT8 | FP8); q != 0 {
		return Plan{}, fmt.Errorf("%w: TensorRT %d builds %s only from Q/DQ-quantized models; quantize the model with "+
			"ModelOpt (python -m modelopt.onnx.quantization --quantize_mode %s) and build it without %s",
			ErrPrecisionUnsupported, major, q.typeNames(), quantizeMode(q), q)
	}
	if req == FP16|BF16 {
		return Plan{}, fmt.Errorf("%w: --fp16 and --bf16 together on TensorRT %d: the model is converted to one "+
			"low-precision type, so pick one of them", ErrPrecisionUnsupported, major)
	}
	p := Plan{StronglyTyped: true}
	switch req {
	case FP16:
		p.ConvertONNX = TypeFP16
	case BF16:
		p.ConvertONNX = TypeBF16
	}
	return p, nil
}

// quantizeMode names ModelOpt's --quantize_mode for the quantized requests in q.
func quantizeMode(q Precision) string {
	if q&INT8 != 0 {
		return "int8"
	}
	return "fp8"
}
