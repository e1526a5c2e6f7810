package convert

import (
	"fmt"
	"sort"
	"strings"

	"github.com/trtbuild/trtbuild/internal/convert/half"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// Target is the reduced-precision type a model is converted to.
type Target string

// The targets.
const (
	FP16 Target = "fp16"
	BF16 Target = "bf16"
)

// ParseTarget accepts "fp16", "float16", "bf16" and "bfloat16".
func ParseTarget(s string) (Target, error) {
	switch strings.ToLower(s) {
	case "fp16", "float16", "half":
		return FP16, nil
	case "bf16", "bfloat16":
		return BF16, nil
	}
	return "", fmt.Errorf("unknown target type %q; use fp16 or bf16", s)
}

func (t Target) valid() bool { return t == FP16 || t == BF16 }

// elemName is the target's schema spelling: "float16" or "bfloat16".
func (t Target) elemName() string {
	if t == BF16 {
		return "bfloat16"
	}
	return "float16"
}

func (t Target) dataType() onnxpb.TensorProto_DataType {
	if t == BF16 {
		return onnxpb.TensorProto_BFLOAT16
	}
	return onnxpb.TensorProto_FLOAT16
}

func (t Target) format() half.Format {
	if t == BF16 {
		return half.BF16
	}
	return half.FP16
}

// minOpset is the oldest ai.onnx opset a model may import to be converted
// to t: Cast must accept the target type.
func (t Target) minOpset() int {
	if t == BF16 {
		return 13 // Cast-13 is the first to accept bfloat16
	}
	return 7
}

// Options control a conversion. The zero value is not valid: Target must
// be set.
type Options struct {
	// Target is the type float32 values are converted to.
	Target Target
	// KeepOps lists operator types kept in float32 in addition to the
	// default list (DefaultKeepOps), unless NoDefaultKeepOps is set.
	KeepOps []string
	// NoDefaultKeepOps converts the operators of the default list too.
	NoDefaultKeepOps bool
	// KeepNodes lists the names of single nodes kept in float32.
	KeepNodes []string
	// Keep lists nodes and operator types kept in float32, mixed, as
	// `trtbuild convert --keep-fp32` takes them: an entry that is the name
	// of a node of the model keeps that node, and an entry that is an
	// operator type keeps every node of that type (both, for a name that is
	// both). An entry that is neither is an error. It is the option for the
	// conversion a TensorRT 11 build does before parsing, too.
	Keep []string
	// ConvertIO changes the main graph's float32 inputs and outputs to the
	// target type. By default they keep their types and Cast nodes convert
	// them at the model's edges.
	ConvertIO bool
}

// keepGroup is a set of operators kept in float32 by default, and why.
type keepGroup struct {
	ops []string
	why string
}

// defaultKeep is the default list of operators kept in float32. It follows
// the established converters (PyTorch autocast's float32 list, ONNX
// Runtime's and onnxconverter-common's float16 block lists, TensorRT's
// advice for normalization layers) and is documented in docs/convert.md.
var defaultKeep = []keepGroup{
	{[]string{"ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd", "CumSum", "CumProd"},
		"accumulates many values, and sums or products outgrow the target type's range or precision"},
	{[]string{"Exp", "Log", "Pow", "Softplus", "Reciprocal"},
		"exponential, logarithm or power: outputs leave the target type's range or lose precision"},
	{[]string{"Softmax", "LogSoftmax"},
		"probabilities: small values underflow and sums lose precision in the target type"},
	{[]string{"LayerNormalization", "GroupNormalization", "InstanceNormalization", "RMSNormalization", "LpNormalization", "MeanVarianceNormalization", "LRN"},
		"normalization: statistics over many elements overflow or lose precision in the target type"},
	{[]string{"TopK", "NonMaxSuppression", "RoiAlign"},
		"selects by value or by coordinates: rounding changes which elements are chosen"},
	{[]string{"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"},
		"random generator: its statistics are defined in float32"},
}

// DefaultKeepOps returns the operator types kept in float32 by default,
// sorted.
func DefaultKeepOps() []string {
	var ops []string
	for _, g := range defaultKeep {
		ops = append(ops, g.ops...)
	}
	sort.Strings(ops)
	return ops
}

// DefaultKeepReason returns why op is on the default list, or "".
func DefaultKeepReason(op string) string {
	for _, g := range defaultKeep {
		for _, o := range g.ops {
			if o == op {
				return g.why
			}
		}
	}
	return ""
}
