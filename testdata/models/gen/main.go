// Command gen writes the ONNX models in testdata/models: small valid models
// for tests and demos, and malformed files that the readers must refuse.
// Its output is byte-for-byte deterministic; a test in internal/onnx runs it
// into a temporary folder and compares the result with the committed files.
//
// Usage, from the repository root:
//
//	go run ./testdata/models/gen            # writes into testdata/models
//	go run ./testdata/models/gen -out DIR
//	go run ./testdata/models/gen -large FILE [-large-mib 1024]
//
// -large writes only one large model (a chain of MatMuls with 4 MiB weights
// stored inline), for the inspection benchmark in scripts/bench-inspect.sh.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

func main() {
	out := flag.String("out", filepath.Join("testdata", "models"), "folder to write the models into")
	large := flag.String("large", "", "write only a large model to this file")
	largeMiB := flag.Int("large-mib", 1024, "size of the -large model in MiB")
	flag.Parse()
	var err error
	if *large != "" {
		err = writeLarge(*large, *largeMiB)
	} else {
		err = run(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// file is one generated file.
type file struct {
	name string
	data []byte
}

func run(dir string) error {
	files, err := generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	return nil
}

// writeLarge writes the benchmark model of about mib MiB to path.
func writeLarge(path string, mib int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tm.WriteLarge(f, mib); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func generate() ([]file, error) {
	var files []file
	add := func(name string, m *onnxpb.ModelProto) ([]byte, error) {
		b, err := tm.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, file{name, b})
		return b, nil
	}
	if _, err := add("convnet.onnx", convnet()); err != nil {
		return nil, err
	}
	dyn, err := add("dynamic_batch.onnx", dynamicBatch())
	if err != nil {
		return nil, err
	}
	if _, err := add("two_inputs_dynamic.onnx", twoInputsDynamic()); err != nil {
		return nil, err
	}
	if _, err := add("bert_tiny.onnx", bertTiny()); err != nil {
		return nil, err
	}
	if _, err := add("transformer_block.onnx", transformerBlock()); err != nil {
		return nil, err
	}
	ext, bin := externalData()
	if _, err := add("external_data.onnx", ext); err != nil {
		return nil, err
	}
	files = append(files, file{"external_data.bin", bin})
	if _, err := add("fp16.onnx", fp16()); err != nil {
		return nil, err
	}
	if _, err := add("custom_op.onnx", customOp()); err != nil {
		return nil, err
	}
	if _, err := add("control_flow.onnx", controlFlow()); err != nil {
		return nil, err
	}

	// Malformed files.
	files = append(files,
		file{"truncated.onnx", dyn[:len(dyn)*3/5]},
		file{"random_bytes.onnx", randomBytes(4096)},
		file{"wrong_magic.onnx", wrongMagic()},
		file{"nested_length_bomb.onnx", nestedLengthBomb(1000)},
	)
	return files, nil
}

// builder appends nodes and initializers with deterministic weights to a
// graph. Its methods return the name of the value they produce.
type builder struct {
	g   *onnxpb.GraphProto
	rnd *tm.Rand
}

func (b *builder) init(t *onnxpb.TensorProto) string {
	b.g.Initializer = append(b.g.Initializer, t)
	return t.Name
}

func (b *builder) node(n *onnxpb.NodeProto) string {
	b.g.Node = append(b.g.Node, n)
	return n.Output[0]
}

// conv adds a bias-free convolution with He-scaled random weights.
func (b *builder) conv(name, in string, cin, cout, k, stride int64) string {
	fan := float32(cin * k * k)
	w := b.init(tm.Floats(name+".weight", []int64{cout, cin, k, k}, b.rnd.Floats(int(cout*cin*k*k), float32(math.Sqrt(float64(6/fan))))))
	pad := k / 2
	return b.node(tm.Node(name, "Conv", []string{in, w}, []string{name + "_out"},
		tm.AttrInts("kernel_shape", k, k), tm.AttrInts("strides", stride, stride), tm.AttrInts("pads", pad, pad, pad, pad)))
}

// bn adds inference-mode batch normalization over c channels.
func (b *builder) bn(name, in string, c int64) string {
	ones := func() []float32 {
		v := b.rnd.Floats(int(c), 0.1)
		for i := range v {
			v[i] += 1
		}
		return v
	}
	scale := b.init(tm.Floats(name+".weight", []int64{c}, ones()))
	bias := b.init(tm.Floats(name+".bias", []int64{c}, b.rnd.Floats(int(c), 0.1)))
	mean := b.init(tm.Floats(name+".running_mean", []int64{c}, b.rnd.Floats(int(c), 0.1)))
	vari := b.init(tm.Floats(name+".running_var", []int64{c}, ones()))
	return b.node(tm.Node(name, "BatchNormalization", []string{in, scale, bias, mean, vari}, []string{name + "_out"},
		tm.AttrFloat("epsilon", 1e-5)))
}

func (b *builder) op(name, op string, in ...string) string {
	return b.node(tm.Node(name, op, in, []string{name + "_out"}))
}

// convnet is a small residual CNN for 224x224 RGB images with ten classes:
// 24 nodes with the layer names a PyTorch export would have. It is the model
// the README's demo builds with the simulated builder.
func convnet() *onnxpb.ModelProto {
	b := &builder{g: &onnxpb.GraphProto{Name: "convnet"}, rnd: tm.NewRand(1)}
	x := "images"
	x = b.conv("stem/conv1", x, 3, 16, 3, 2)
	x = b.bn("stem/bn1", x, 16)
	x = b.op("stem/relu1", "Relu", x)
	x = b.node(tm.Node("stem/pool", "MaxPool", []string{x}, []string{"stem/pool_out"},
		tm.AttrInts("kernel_shape", 3, 3), tm.AttrInts("strides", 2, 2), tm.AttrInts("pads", 1, 1, 1, 1)))

	// stage1: a basic residual block, 16 channels.
	skip := x
	x = b.conv("stage1/block1/conv1", x, 16, 16, 3, 1)
	x = b.bn("stage1/block1/bn1", x, 16)
	x = b.op("stage1/block1/relu1", "Relu", x)
	x = b.conv("stage1/block1/conv2", x, 16, 16, 3, 1)
	x = b.bn("stage1/block1/bn2", x, 16)
	x = b.op("stage1/block1/add", "Add", x, skip)
	x = b.op("stage1/block1/relu2", "Relu", x)

	// stage2: a downsampling residual block, 16 -> 32 channels.
	skip = x
	x = b.conv("stage2/block1/conv1", x, 16, 32, 3, 2)
	x = b.bn("stage2/block1/bn1", x, 32)
	x = b.op("stage2/block1/relu1", "Relu", x)
	x = b.conv("stage2/block1/conv2", x, 32, 32, 3, 1)
	x = b.bn("stage2/block1/bn2", x, 32)
	skip = b.conv("stage2/block1/downsample/conv", skip, 16, 32, 1, 2)
	skip = b.bn("stage2/block1/downsample/bn", skip, 32)
	x = b.op("stage2/block1/add", "Add", x, skip)
	x = b.op("stage2/block1/relu2", "Relu", x)

	x = b.op("head/pool", "GlobalAveragePool", x)
	x = b.node(tm.Node("head/flatten", "Flatten", []string{x}, []string{"head/flatten_out"}, tm.AttrInt("axis", 1)))
	w := b.init(tm.Floats("head/fc.weight", []int64{10, 32}, b.rnd.Floats(320, 0.17)))
	bias := b.init(tm.Floats("head/fc.bias", []int64{10}, b.rnd.Floats(10, 0.1)))
	x = b.node(tm.Node("head/fc", "Gemm", []string{x, w, bias}, []string{"logits"}, tm.AttrInt("transB", 1)))
	b.node(tm.Node("head/softmax", "Softmax", []string{x}, []string{"probs"}, tm.AttrInt("axis", 1)))

	b.g.Input = []*onnxpb.ValueInfoProto{tm.Value("images", tm.F32, 1, 3, 224, 224)}
	b.g.Output = []*onnxpb.ValueInfoProto{tm.Value("probs", tm.F32, 1, 10)}
	return tm.Model(b.g)
}

// dynamicBatch classifies 64x64 RGB images; the batch size is dynamic.
func dynamicBatch() *onnxpb.ModelProto {
	b := &builder{g: &onnxpb.GraphProto{Name: "dynamic_batch"}, rnd: tm.NewRand(2)}
	x := b.conv("features/conv", "images", 3, 8, 3, 2)
	x = b.op("features/relu", "Relu", x)
	x = b.op("features/pool", "GlobalAveragePool", x)
	x = b.node(tm.Node("classifier/flatten", "Flatten", []string{x}, []string{"classifier/flatten_out"}, tm.AttrInt("axis", 1)))
	w := b.init(tm.Floats("classifier/fc.weight", []int64{8, 4}, b.rnd.Floats(32, 0.5)))
	bias := b.init(tm.Floats("classifier/fc.bias", []int64{4}, b.rnd.Floats(4, 0.1)))
	b.node(tm.Node("classifier/fc", "Gemm", []string{x, w, bias}, []string{"logits"}))
	b.g.Input = []*onnxpb.ValueInfoProto{tm.Value("images", tm.F32, "batch", 3, 64, 64)}
	b.g.Output = []*onnxpb.ValueInfoProto{tm.Value("logits", tm.F32, "batch", 4)}
	return tm.Model(b.g)
}

// twoInputsDynamic is a masked mean-pooling text encoder with two inputs,
// both dynamic in batch and sequence length.
func twoInputsDynamic() *onnxpb.ModelProto {
	b := &builder{g: &onnxpb.GraphProto{Name: "two_inputs_dynamic"}, rnd: tm.NewRand(3)}
	emb := b.init(tm.Floats("embed/table", []int64{100, 16}, b.rnd.Floats(1600, 1)))
	ax2 := b.init(tm.Int64s("axes_2", []int64{1}, 2))
	ax1 := b.init(tm.Int64s("axes_1", []int64{1}, 1))
	w := b.init(tm.Floats("head/proj.weight", []int64{16, 4}, b.rnd.Floats(64, 0.5)))
	bias := b.init(tm.Floats("head/proj.bias", []int64{4}, b.rnd.Floats(4, 0.1)))

	e := b.node(tm.Node("embed/gather", "Gather", []string{emb, "input_ids"}, []string{"embed/gather_out"}, tm.AttrInt("axis", 0)))
	m := b.op("mask/unsqueeze", "Unsqueeze", "attention_mask", ax2)
	e = b.op("embed/mask", "Mul", e, m)
	sum := b.node(tm.Node("pool/sum", "ReduceSum", []string{e, ax1}, []string{"pool/sum_out"}, tm.AttrInt("keepdims", 0)))
	cnt := b.node(tm.Node("mask/count", "ReduceSum", []string{"attention_mask", ax1}, []string{"mask/count_out"}, tm.AttrInt("keepdims", 1)))
	mean := b.op("pool/mean", "Div", sum, cnt)
	y := b.op("head/matmul", "MatMul", mean, w)
	b.node(tm.Node("head/bias", "Add", []string{y, bias}, []string{"pooled"}))

	b.g.Input = []*onnxpb.ValueInfoProto{
		tm.Value("input_ids", tm.I64, "batch", "sequence"),
		tm.Value("attention_mask", tm.F32, "batch", "sequence"),
	}
	b.g.Output = []*onnxpb.ValueInfoProto{tm.Value("pooled", tm.F32, "batch", 4)}
	return tm.Model(b.g)
}

// bertTiny is a BERT-shaped encoder front: input_ids, attention_mask and
// token_type_ids, all int64 batch x seq as transformers exports them, summed
// word and token-type embeddings masked by attention_mask, and a pooler. Its
// three inputs share the named dimensions "batch" and "seq".
func bertTiny() *onnxpb.ModelProto {
	b := &builder{g: &onnxpb.GraphProto{Name: "bert_tiny"}, rnd: tm.NewRand(9)}
	words := b.init(tm.Floats("embeddings/word_embeddings.weight", []int64{100, 16}, b.rnd.Floats(1600, 1)))
	types := b.init(tm.Floats("embeddings/token_type_embeddings.weight", []int64{2, 16}, b.rnd.Floats(32, 1)))
	ax2 := b.init(tm.Int64s("axes_2", []int64{1}, 2))
	ax1 := b.init(tm.Int64s("axes_1", []int64{1}, 1))
	w := b.init(tm.Floats("pooler/dense.weight", []int64{16, 16}, b.rnd.Floats(256, 0.25)))
	bias := b.init(tm.Floats("pooler/dense.bias", []int64{16}, b.rnd.Floats(16, 0.1)))

	e := b.node(tm.Node("embeddings/word", "Gather", []string{words, "input_ids"}, []string{"embeddings/word_out"}, tm.AttrInt("axis", 0)))
	t := b.node(tm.Node("embeddings/token_type", "Gather", []string{types, "token_type_ids"}, []string{"embeddings/token_type_out"}, tm.AttrInt("axis", 0)))
	e = b.op("embeddings/add", "Add", e, t)
	m := b.node(tm.Node("mask/cast", "Cast", []string{"attention_mask"}, []string{"mask/cast_out"}, tm.AttrInt("to", int64(tm.F32))))
	m3 := b.op("mask/unsqueeze", "Unsqueeze", m, ax2)
	b.node(tm.Node("encoder/mask", "Mul", []string{e, m3}, []string{"last_hidden_state"}))
	sum := b.node(tm.Node("pooler/sum", "ReduceSum", []string{"last_hidden_state", ax1}, []string{"pooler/sum_out"}, tm.AttrInt("keepdims", 0)))
	cnt := b.node(tm.Node("pooler/count", "ReduceSum", []string{m, ax1}, []string{"pooler/count_out"}, tm.AttrInt("keepdims", 1)))
	mean := b.op("pooler/mean", "Div", sum, cnt)
	y := b.op("pooler/dense", "MatMul", mean, w)
	y = b.op("pooler/bias", "Add", y, bias)
	b.node(tm.Node("pooler/tanh", "Tanh", []string{y}, []string{"pooler_output"}))

	b.g.Input = []*onnxpb.ValueInfoProto{
		tm.Value("input_ids", tm.I64, "batch", "seq"),
		tm.Value("attention_mask", tm.I64, "batch", "seq"),
		tm.Value("token_type_ids", tm.I64, "batch", "seq"),
	}
	b.g.Output = []*onnxpb.ValueInfoProto{
		tm.Value("last_hidden_state", tm.F32, "batch", "seq", 16),
		tm.Value("pooler_output", tm.F32, "batch", 16),
	}
	return tm.Model(b.g)
}

// externalData is a linear layer whose weight (64x64) and bias (64) are in
// external_data.bin, the bias at a page-aligned offset as ONNX recommends.
// transformerBlock is one pre-norm transformer encoder block over 32-wide tokens (batch x seq x
// 32): LayerNormalization, single-head attention (a Softmax between two MatMuls), residual
// adds and a two-layer MLP. TensorRT hands such graphs to its Myelin compiler.
func transformerBlock() *onnxpb.ModelProto {
	b := &builder{g: &onnxpb.GraphProto{Name: "transformer_block"}, rnd: tm.NewRand(11)}
	const d, hidden = 32, 64
	ones := make([]float32, d)
	for i := range ones {
		ones[i] = 1
	}
	weight := func(name string, rows, cols int64) string {
		return b.init(tm.Floats(name, []int64{rows, cols}, b.rnd.Floats(int(rows*cols), float32(1/math.Sqrt(float64(rows))))))
	}
	vector := func(name string, n int64) string {
		return b.init(tm.Floats(name, []int64{n}, b.rnd.Floats(int(n), 0.1)))
	}
	norm := func(name, in string) string {
		g := b.init(tm.Floats(name+".weight", []int64{d}, ones))
		return b.node(tm.Node(name, "LayerNormalization", []string{in, g, vector(name+".bias", d)}, []string{name + "_out"},
			tm.AttrInt("axis", -1), tm.AttrFloat("epsilon", 1e-5)))
	}
	x := norm("block/ln1", "tokens")
	q := b.op("block/attn/q", "MatMul", x, weight("block/attn/q.weight", d, d))
	k := b.op("block/attn/k", "MatMul", x, weight("block/attn/k.weight", d, d))
	v := b.op("block/attn/v", "MatMul", x, weight("block/attn/v.weight", d, d))
	kt := b.node(tm.Node("block/attn/k_t", "Transpose", []string{k}, []string{"block/attn/k_t_out"}, tm.AttrInts("perm", 0, 2, 1)))
	s := b.op("block/attn/scores", "MatMul", q, kt)
	scale := b.init(tm.Floats("block/attn/scale", []int64{}, []float32{float32(math.Sqrt(d))}))
	s = b.op("block/attn/scale_div", "Div", s, scale)
	p := b.node(tm.Node("block/attn/softmax", "Softmax", []string{s}, []string{"block/attn/softmax_out"}, tm.AttrInt("axis", -1)))
	a := b.op("block/attn/context", "MatMul", p, v)
	a = b.op("block/attn/out", "MatMul", a, weight("block/attn/out.weight", d, d))
	a = b.op("block/attn/out_bias", "Add", a, vector("block/attn/out.bias", d))
	r := b.op("block/residual1", "Add", "tokens", a)
	x = norm("block/ln2", r)
	x = b.op("block/mlp/fc1", "MatMul", x, weight("block/mlp/fc1.weight", d, hidden))
	x = b.op("block/mlp/fc1_bias", "Add", x, vector("block/mlp/fc1.bias", hidden))
	x = b.op("block/mlp/relu", "Relu", x)
	x = b.op("block/mlp/fc2", "MatMul", x, weight("block/mlp/fc2.weight", hidden, d))
	x = b.op("block/mlp/fc2_bias", "Add", x, vector("block/mlp/fc2.bias", d))
	b.node(tm.Node("block/residual2", "Add", []string{r, x}, []string{"hidden"}))

	b.g.Input = []*onnxpb.ValueInfoProto{tm.Value("tokens", tm.F32, "batch", "seq", d)}
	b.g.Output = []*onnxpb.ValueInfoProto{tm.Value("hidden", tm.F32, "batch", "seq", d)}
	return tm.Model(b.g)
}

func externalData() (*onnxpb.ModelProto, []byte) {
	rnd := tm.NewRand(4)
	const n = 64
	w := rnd.Floats(n*n, 0.2)
	bias := rnd.Floats(n, 0.1)
	const biasOffset = 16384
	bin := make([]byte, biasOffset+4*n)
	for i, v := range w {
		binary.LittleEndian.PutUint32(bin[4*i:], math.Float32bits(v))
	}
	for i, v := range bias {
		binary.LittleEndian.PutUint32(bin[biasOffset+4*i:], math.Float32bits(v))
	}
	g := &onnxpb.GraphProto{
		Name: "external_data",
		Initializer: []*onnxpb.TensorProto{
			tm.External("fc.weight", []int64{n, n}, "external_data.bin", 0, 4*n*n),
			tm.External("fc.bias", []int64{n}, "external_data.bin", biasOffset, 4*n),
		},
		Node: []*onnxpb.NodeProto{
			tm.Node("fc/matmul", "MatMul", []string{"x", "fc.weight"}, []string{"fc/matmul_out"}),
			tm.Node("fc/add", "Add", []string{"fc/matmul_out", "fc.bias"}, []string{"fc/add_out"}),
			tm.Node("fc/relu", "Relu", []string{"fc/add_out"}, []string{"y"}),
		},
		Input:  []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 1, n)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, 1, n)},
	}
	return tm.Model(g), bin
}

// fp16 is a half-precision convolution block with half-precision input and
// output.
func fp16() *onnxpb.ModelProto {
	rnd := tm.NewRand(5)
	g := &onnxpb.GraphProto{
		Name: "fp16",
		Initializer: []*onnxpb.TensorProto{
			tm.Halves("conv.weight", []int64{8, 3, 3, 3}, rnd.Floats(8*3*3*3, 0.5)),
			tm.Halves("conv.bias", []int64{8}, rnd.Floats(8, 0.1)),
		},
		Node: []*onnxpb.NodeProto{
			tm.Node("conv", "Conv", []string{"images", "conv.weight", "conv.bias"}, []string{"conv_out"},
				tm.AttrInts("kernel_shape", 3, 3), tm.AttrInts("pads", 1, 1, 1, 1)),
			tm.Node("relu", "Relu", []string{"conv_out"}, []string{"relu_out"}),
			tm.Node("pool", "MaxPool", []string{"relu_out"}, []string{"features"},
				tm.AttrInts("kernel_shape", 2, 2), tm.AttrInts("strides", 2, 2)),
		},
		Input:  []*onnxpb.ValueInfoProto{tm.Value("images", tm.F16, 1, 3, 64, 64)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("features", tm.F16, 1, 8, 32, 32)},
	}
	return tm.Model(g)
}

// customOp uses an operator from a custom domain, which TensorRT can only
// run with a plugin, and one unnamed node.
func customOp() *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{
		Name: "custom_op",
		Node: []*onnxpb.NodeProto{
			{Name: "act/swish", OpType: "Swish", Domain: "com.example", Input: []string{"x"}, Output: []string{"s"}},
			{OpType: "Relu", Input: []string{"s"}, Output: []string{"y"}},
		},
		Input:  []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 1, 8)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, 1, 8)},
	}
	return tm.Model(g, &onnxpb.OperatorSetIdProto{Domain: "com.example", Version: 1})
}

// controlFlow picks one of two branches with an If node; the branches are
// subgraphs with their own nodes and an initializer. The output's second
// dimension is unknown (neither a size nor a name).
func controlFlow() *onnxpb.ModelProto {
	branch := func(name, op string) *onnxpb.GraphProto {
		return &onnxpb.GraphProto{
			Name: name,
			Node: []*onnxpb.NodeProto{
				tm.Node(name+"/scale", "Mul", []string{"x", name + ".k"}, []string{name + "/scale_out"}),
				tm.Node(name+"/act", op, []string{name + "/scale_out"}, []string{name + "_out"}),
			},
			Initializer: []*onnxpb.TensorProto{tm.Floats(name+".k", nil, []float32{2})},
			Output:      []*onnxpb.ValueInfoProto{tm.Value(name+"_out", tm.F32, 1, 8)},
		}
	}
	out := tm.Value("y", tm.F32, 1, nil)
	g := &onnxpb.GraphProto{
		Name: "control_flow",
		Node: []*onnxpb.NodeProto{
			tm.Node("select", "If", []string{"cond"}, []string{"y"},
				tm.AttrGraph("then_branch", branch("then", "Relu")),
				tm.AttrGraph("else_branch", branch("else", "Sigmoid"))),
		},
		Input: []*onnxpb.ValueInfoProto{
			tm.Value("x", tm.F32, 1, 8),
			tm.Value("cond", onnxpb.TensorProto_BOOL),
		},
		Output: []*onnxpb.ValueInfoProto{out},
	}
	return tm.Model(g)
}

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(n int) []byte {
	rnd := tm.NewRand(6)
	out := make([]byte, n)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(out[i:], rnd.Uint64())
	}
	return out
}

// wrongMagic is the start of a PNG image: what a mistaken download or a
// renamed file looks like.
func wrongMagic() []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, 13)
	b = append(b, "IHDR"...)
	b = binary.BigEndian.AppendUint32(b, 224)
	b = binary.BigEndian.AppendUint32(b, 224)
	b = append(b, 8, 2, 0, 0, 0)
	return append(b, randomBytes(256)...)
}

// nestedLengthBomb is a model whose graph holds an If node whose branch
// holds an If node ... levels deep, every length consistent, the innermost
// node claiming an attribute of 2^40 bytes. A reader without a nesting limit
// recurses levels*3 messages deep; one that trusts lengths allocates 1 TiB.
func nestedLengthBomb(levels int) []byte {
	msg := func(num protowire.Number, payload []byte) []byte {
		b := protowire.AppendTag(nil, num, protowire.BytesType)
		return protowire.AppendBytes(b, payload)
	}
	str := func(num protowire.Number, s string) []byte { return msg(num, []byte(s)) }
	// Innermost node: op_type If, then an attribute whose length claims 2^40.
	node := str(4, "If")
	node = protowire.AppendTag(node, 5, protowire.BytesType)
	node = protowire.AppendVarint(node, 1<<40)
	for i := 0; i < levels; i++ {
		graph := msg(1, node)                         // GraphProto.node
		attr := append(str(1, "g"), msg(6, graph)...) // AttributeProto.name, .g
		attr = append(attr, 0xa0, 0x01, byte(onnxpb.AttributeProto_GRAPH))
		node = append(str(4, "If"), msg(5, attr)...) // NodeProto.op_type, .attribute
	}
	model := protowire.AppendTag(nil, 1, protowire.VarintType)
	model = protowire.AppendVarint(model, tm.IRVersion)
	model = append(model, msg(8, append(str(1, ""), 0x10, tm.Opset))...)
	return append(model, msg(7, msg(1, node))...)
}
