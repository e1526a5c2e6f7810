package convert

import (
	"math"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// The models below exercise one rule each. They are written to
// testdata/models by the golden test (with -update), so that the numeric
// check script can run them too.

const (
	f32   = onnxpb.TensorProto_FLOAT
	i64   = onnxpb.TensorProto_INT64
	u8    = onnxpb.TensorProto_UINT8
	bool_ = onnxpb.TensorProto_BOOL
)

func weights(name string, seed uint64, scale float32, dims ...int64) *onnxpb.TensorProto {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return tm.Floats(name, dims, tm.NewRand(seed).Floats(int(n), scale))
}

func graph(name string, nodes []*onnxpb.NodeProto, inits []*onnxpb.TensorProto, in, out []*onnxpb.ValueInfoProto) *onnxpb.GraphProto {
	return &onnxpb.GraphProto{Name: name, Node: nodes, Initializer: inits, Input: in, Output: out}
}

func attrStr(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_STRING, S: []byte(v)}
}

func attrFloats(name string, v ...float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_FLOATS, Floats: v}
}

// mlp: MatMul, Add, Relu, MatMul, Softmax (kept by default).
func mlpModel() *onnxpb.ModelProto {
	return tm.Model(graph("mlp",
		[]*onnxpb.NodeProto{
			tm.Node("mm1", "MatMul", []string{"x", "W1"}, []string{"h1"}),
			tm.Node("add1", "Add", []string{"h1", "b1"}, []string{"h2"}),
			tm.Node("relu", "Relu", []string{"h2"}, []string{"h3"}),
			tm.Node("mm2", "MatMul", []string{"h3", "W2"}, []string{"logits"}),
			tm.Node("softmax", "Softmax", []string{"logits"}, []string{"probs"}, tm.AttrInt("axis", -1)),
		},
		[]*onnxpb.TensorProto{weights("W1", 1, 0.5, 8, 16), weights("b1", 2, 0.1, 16), weights("W2", 3, 0.5, 16, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, "batch", 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("logits", f32, "batch", 4), tm.Value("probs", f32, "batch", 4)}))
}

// castChain: a uint8 image cast to float (retargeted), scaled, and a float cast to int64.
func castChainModel() *onnxpb.ModelProto {
	return tm.Model(graph("cast_chain",
		[]*onnxpb.NodeProto{
			tm.Node("to_float", "Cast", []string{"image"}, []string{"f"}, tm.AttrInt("to", int64(f32))),
			tm.Node("scale", "Mul", []string{"f", "inv255"}, []string{"scaled"}),
			tm.Node("center", "Sub", []string{"scaled", "mean"}, []string{"normalized"}),
			tm.Node("round", "Cast", []string{"scaled"}, []string{"levels"}, tm.AttrInt("to", int64(i64))),
		},
		[]*onnxpb.TensorProto{tm.Floats("inv255", nil, []float32{1.0 / 255}), tm.Floats("mean", []int64{3, 1, 1}, []float32{0.485, 0.456, 0.406})},
		[]*onnxpb.ValueInfoProto{tm.Value("image", u8, 1, 3, 4, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("normalized", f32, 1, 3, 4, 4), tm.Value("levels", i64, 1, 3, 4, 4)}))
}

// sensitive: default-list operators between converted ones, and Range, whose
// schema has no float16 version.
func sensitiveModel() *onnxpb.ModelProto {
	return tm.Model(graph("sensitive",
		[]*onnxpb.NodeProto{
			tm.Node("scale_in", "Mul", []string{"x", "two"}, []string{"x2"}),
			tm.Node("ln", "LayerNormalization", []string{"x2", "gamma", "beta"}, []string{"normed"}, tm.AttrInt("axis", -1)),
			tm.Node("sum", "ReduceSum", []string{"normed", "axes"}, []string{"summed"}, tm.AttrInt("keepdims", 1)),
			tm.Node("exp", "Exp", []string{"summed"}, []string{"e"}),
			tm.Node("mul", "Mul", []string{"e", "normed"}, []string{"scaled"}),
			tm.Node("topk", "TopK", []string{"scaled", "k"}, []string{"top", "top_idx"}, tm.AttrInt("axis", -1)),
			tm.Node("range", "Range", []string{"start", "limit", "delta"}, []string{"steps"}),
			tm.Node("shift", "Add", []string{"top", "steps"}, []string{"y"}),
		},
		[]*onnxpb.TensorProto{
			tm.Floats("two", nil, []float32{2}), weights("gamma", 4, 1, 8), weights("beta", 5, 0.1, 8),
			tm.Int64s("axes", []int64{1}, -1), tm.Int64s("k", []int64{1}, 3),
			tm.Floats("start", nil, []float32{0}), tm.Floats("limit", nil, []float32{1.5}), tm.Floats("delta", nil, []float32{0.5}),
		},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 2, 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 2, 3), tm.Value("top_idx", i64, 2, 3)}))
}

// overflow: an attention-style mask of -1e5 overflows float16; 65504 fits.
func overflowModel() *onnxpb.ModelProto {
	mask := make([]float32, 8)
	for i := 4; i < 8; i++ {
		mask[i] = -1e5
	}
	fits := make([]float32, 8)
	fits[0] = 65504
	return tm.Model(graph("overflow",
		[]*onnxpb.NodeProto{
			tm.Node("mask_add", "Add", []string{"x", "mask"}, []string{"masked"}),
			tm.Node("relu", "Relu", []string{"masked"}, []string{"r"}),
			tm.Node("bias", "Add", []string{"r", "fits"}, []string{"biased"}),
			tm.Node("mm", "MatMul", []string{"biased", "W"}, []string{"y"}),
			tm.Node("mask_mul", "Mul", []string{"x", "mask"}, []string{"z"}),
		},
		[]*onnxpb.TensorProto{tm.Floats("mask", []int64{8}, mask), tm.Floats("fits", []int64{8}, fits), weights("W", 6, 0.01, 8, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 2, 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 2, 4), tm.Value("z", f32, 2, 8)}))
}

// ifModel: If whose branches read an outer initializer and the outer
// input; the else branch holds a kept Softmax.
func ifModel() *onnxpb.ModelProto {
	then := graph("then",
		[]*onnxpb.NodeProto{
			tm.Node("then_mul", "Mul", []string{"x", "k"}, []string{"then_scaled"}),
			tm.Node("then_relu", "Relu", []string{"then_scaled"}, []string{"then_out"}),
		}, nil, nil, []*onnxpb.ValueInfoProto{tm.Value("then_out", f32, 2, 8)})
	els := graph("else",
		[]*onnxpb.NodeProto{
			tm.Node("else_softmax", "Softmax", []string{"x"}, []string{"else_out"}),
		}, nil, nil, []*onnxpb.ValueInfoProto{tm.Value("else_out", f32, 2, 8)})
	return tm.Model(graph("if",
		[]*onnxpb.NodeProto{
			tm.Node("pre", "Mul", []string{"x_in", "k"}, []string{"x"}),
			tm.Node("branch", "If", []string{"cond"}, []string{"y"}, tm.AttrGraph("then_branch", then), tm.AttrGraph("else_branch", els)),
			tm.Node("post", "Add", []string{"y", "x"}, []string{"out"}),
		},
		[]*onnxpb.TensorProto{weights("k", 7, 1, 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("x_in", f32, 2, 8), tm.Value("cond", bool_)},
		[]*onnxpb.ValueInfoProto{tm.Value("out", f32, 2, 8)}))
}

// loopModel: a Loop carrying a float accumulator, reading an outer value,
// with a float scan output and a Constant inside the body.
func loopModel() *onnxpb.ModelProto {
	body := graph("body",
		[]*onnxpb.NodeProto{
			tm.Node("acc_add", "Add", []string{"acc", "x"}, []string{"acc_next"}),
			tm.Node("cond_id", "Identity", []string{"cond_in"}, []string{"cond_out"}),
			tm.Node("half_c", "Constant", nil, []string{"half"}, tm.AttrFloat("value_float", 0.5)),
			tm.Node("emit", "Mul", []string{"acc_next", "half"}, []string{"emitted"}),
		}, nil,
		[]*onnxpb.ValueInfoProto{tm.Value("iter", i64), tm.Value("cond_in", bool_), tm.Value("acc", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("cond_out", bool_), tm.Value("acc_next", f32, 4), tm.Value("emitted", f32, 4)})
	return tm.Model(graph("loop",
		[]*onnxpb.NodeProto{
			tm.Node("pre", "Relu", []string{"x_in"}, []string{"x"}),
			tm.Node("loop", "Loop", []string{"trips", "", "acc0"}, []string{"acc_final", "emitted_all"}, tm.AttrGraph("body", body)),
		},
		[]*onnxpb.TensorProto{tm.Int64s("trips", nil, 3), tm.Floats("acc0", []int64{4}, []float32{1, 2, 3, 4})},
		[]*onnxpb.ValueInfoProto{tm.Value("x_in", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("acc_final", f32, 4), tm.Value("emitted_all", f32, 3, 4)}))
}

// scanModel: a Scan with a float state and a kept Exp inside its body.
func scanModel() *onnxpb.ModelProto {
	body := graph("scan_body",
		[]*onnxpb.NodeProto{
			tm.Node("state_add", "Add", []string{"state", "xi"}, []string{"state_next"}),
			tm.Node("body_exp", "Exp", []string{"xi"}, []string{"ei"}),
			tm.Node("body_mul", "Mul", []string{"ei", "state_next"}, []string{"yi"}),
		}, nil,
		[]*onnxpb.ValueInfoProto{tm.Value("state", f32, 4), tm.Value("xi", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("state_next", f32, 4), tm.Value("yi", f32, 4)})
	return tm.Model(graph("scan",
		[]*onnxpb.NodeProto{
			tm.Node("scan", "Scan", []string{"s0", "xs"}, []string{"s_final", "ys"}, tm.AttrGraph("body", body), tm.AttrInt("num_scan_inputs", 1)),
		},
		[]*onnxpb.TensorProto{tm.Floats("s0", []int64{4}, []float32{0, 0, 0, 0})},
		[]*onnxpb.ValueInfoProto{tm.Value("xs", f32, 5, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("s_final", f32, 4), tm.Value("ys", f32, 5, 4)}))
}

// constants: Constant nodes in every spelling and ConstantOfShape with its
// default (float32 zero) value.
func constantsModel() *onnxpb.ModelProto {
	return tm.Model(graph("constants",
		[]*onnxpb.NodeProto{
			tm.Node("c_scalar", "Constant", nil, []string{"c1"}, tm.AttrFloat("value_float", 1.5)),
			tm.Node("c_list", "Constant", nil, []string{"c2"}, attrFloats("value_floats", 1, 2, 3, 4)),
			tm.Node("c_tensor", "Constant", nil, []string{"c3"}, tm.AttrTensor("value", weights("", 8, 1, 4))),
			tm.Node("c_shape", "Constant", nil, []string{"shape"}, tm.AttrTensor("value", tm.Int64s("", []int64{1}, 4))),
			tm.Node("zeros", "ConstantOfShape", []string{"shape"}, []string{"z"}),
			tm.Node("a1", "Add", []string{"x", "c1"}, []string{"s1"}),
			tm.Node("a2", "Mul", []string{"s1", "c2"}, []string{"s2"}),
			tm.Node("a3", "Sub", []string{"s2", "c3"}, []string{"s3"}),
			tm.Node("a4", "Add", []string{"s3", "z"}, []string{"y"}),
		}, nil,
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 4)}))
}

// customOp: an operator of a custom domain whose output type value_info gives.
func customOpModel(typed bool) *onnxpb.ModelProto {
	g := graph("custom",
		[]*onnxpb.NodeProto{
			tm.Node("pre", "Relu", []string{"x"}, []string{"r"}),
			{Name: "swish", OpType: "Swish", Domain: "com.example", Input: []string{"r"}, Output: []string{"s"}},
			tm.Node("post", "Mul", []string{"s", "w"}, []string{"y"}),
		},
		[]*onnxpb.TensorProto{weights("w", 9, 1, 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 1, 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 1, 8)})
	if typed {
		g.ValueInfo = []*onnxpb.ValueInfoProto{tm.Value("s", f32, 1, 8)}
	}
	return tm.Model(g, &onnxpb.OperatorSetIdProto{Domain: "com.example", Version: 1})
}

// convModel: Conv, Relu, Flatten and Gemm. For bfloat16 at opset 17, Conv
// and Gemm have no bfloat16 version and stay.
func convModel() *onnxpb.ModelProto {
	return tm.Model(graph("conv",
		[]*onnxpb.NodeProto{
			tm.Node("conv", "Conv", []string{"images", "cw", "cb"}, []string{"c"}, tm.AttrInts("pads", 1, 1, 1, 1)),
			tm.Node("relu", "Relu", []string{"c"}, []string{"r"}),
			tm.Node("pool", "GlobalAveragePool", []string{"r"}, []string{"p"}),
			tm.Node("flat", "Flatten", []string{"p"}, []string{"f"}),
			tm.Node("fc", "Gemm", []string{"f", "fw", "fb"}, []string{"logits"}, tm.AttrInt("transB", 1)),
			tm.Node("mm", "MatMul", []string{"logits", "pw"}, []string{"y"}),
		},
		[]*onnxpb.TensorProto{weights("cw", 10, 0.3, 4, 3, 3, 3), weights("cb", 11, 0.1, 4), weights("fw", 12, 0.5, 5, 4), weights("fb", 13, 0.1, 5), weights("pw", 14, 0.5, 5, 2)},
		[]*onnxpb.ValueInfoProto{tm.Value("images", f32, 1, 3, 8, 8)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 1, 2)}))
}

// mixedReaders: one initializer read by a converted MatMul and by a kept
// Pow; an output that is an initializer; an output that is an input.
func mixedReadersModel() *onnxpb.ModelProto {
	return tm.Model(graph("mixed",
		[]*onnxpb.NodeProto{
			tm.Node("mm", "MatMul", []string{"x", "W"}, []string{"a"}),
			tm.Node("pow", "Pow", []string{"W", "p"}, []string{"w2"}),
			tm.Node("mm2", "MatMul", []string{"a", "w2"}, []string{"y"}),
		},
		[]*onnxpb.TensorProto{weights("W", 15, 0.5, 4, 4), tm.Floats("p", nil, []float32{2}), weights("table", 16, 1, 3)},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 2, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 2, 4), tm.Value("table", f32, 3), tm.Value("x", f32, 2, 4)}))
}

// ir3Model: an IR version 3 model whose weights are listed as inputs too.
func ir3Model() *onnxpb.ModelProto {
	m := tm.Model(graph("ir3",
		[]*onnxpb.NodeProto{
			tm.Node("mm", "MatMul", []string{"x", "W"}, []string{"h"}),
			tm.Node("relu", "Relu", []string{"h"}, []string{"y"}),
		},
		[]*onnxpb.TensorProto{weights("W", 17, 0.5, 4, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 1, 4), tm.Value("W", f32, 4, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 1, 4)}))
	m.IrVersion = 3
	m.OpsetImport[0].Version = 9
	return m
}

// floatData: weights stored in float_data rather than raw_data, and
// special values.
func floatDataModel() *onnxpb.ModelProto {
	w := &onnxpb.TensorProto{Name: "W", Dims: []int64{4}, DataType: int32(f32),
		FloatData: []float32{1e-9, float32(math.Inf(-1)), 3.14159, float32(math.Copysign(0, -1))}}
	return tm.Model(graph("float_data",
		[]*onnxpb.NodeProto{tm.Node("add", "Add", []string{"x", "W"}, []string{"y"})},
		[]*onnxpb.TensorProto{w},
		[]*onnxpb.ValueInfoProto{tm.Value("x", f32, 4)},
		[]*onnxpb.ValueInfoProto{tm.Value("y", f32, 4)}))
}
