package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/trtbuild/trtbuild/internal/outpath"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/convert/half"
	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/convert/opschema"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

func convertProto(t *testing.T, m *onnxpb.ModelProto, opts Options) (*onnxpb.ModelProto, Summary, error) {
	t.Helper()
	mm, err := fromProto(m)
	if err != nil {
		return nil, Summary{}, err
	}
	s, err := Convert(mm, opts)
	if err != nil {
		return nil, s, err
	}
	got, err := mm.Decode()
	if err != nil {
		t.Fatalf("decoding the converted model: %v", err)
	}
	return got, s, nil
}

func findNode(g *onnxpb.GraphProto, name string) *onnxpb.NodeProto {
	for _, n := range g.Node {
		if n.GetName() == name {
			return n
		}
	}
	return nil
}

func findInit(g *onnxpb.GraphProto, name string) *onnxpb.TensorProto {
	for _, t := range g.Initializer {
		if t.GetName() == name {
			return t
		}
	}
	return nil
}

func TestErrors(t *testing.T) {
	sequenceMap := func() *onnxpb.ModelProto {
		body := graph("b", []*onnxpb.NodeProto{tm.Node("id", "Identity", []string{"e"}, []string{"o"})}, nil,
			[]*onnxpb.ValueInfoProto{tm.Value("e", f32, 2)}, []*onnxpb.ValueInfoProto{tm.Value("o", f32, 2)})
		return tm.Model(graph("g", []*onnxpb.NodeProto{
			tm.Node("seq", "SequenceConstruct", []string{"x"}, []string{"s"}),
			tm.Node("map", "SequenceMap", []string{"s"}, []string{"s2"}, tm.AttrGraph("body", body)),
			tm.Node("at", "ConcatFromSequence", []string{"s2"}, []string{"y"}, tm.AttrInt("axis", 0)),
		}, nil, []*onnxpb.ValueInfoProto{tm.Value("x", f32, 2)}, []*onnxpb.ValueInfoProto{tm.Value("y", f32, 2)}))
	}
	sparse := func() *onnxpb.ModelProto {
		m := mlpModel()
		m.Graph.SparseInitializer = []*onnxpb.SparseTensorProto{{Values: tm.Floats("sp", []int64{1}, []float32{1}), Indices: tm.Int64s("", []int64{1}, 0), Dims: []int64{4}}}
		return m
	}
	newOpset := func() *onnxpb.ModelProto { m := mlpModel(); m.OpsetImport[0].Version = 99; return m }
	unordered := func() *onnxpb.ModelProto {
		m := mlpModel()
		m.Graph.Node[0], m.Graph.Node[1] = m.Graph.Node[1], m.Graph.Node[0]
		return m
	}
	twice := func() *onnxpb.ModelProto {
		m := mlpModel()
		m.Graph.Node[2].Output[0] = "h1"
		return m
	}
	badOp := func() *onnxpb.ModelProto { m := mlpModel(); m.Graph.Node[2].OpType = "Rectify"; return m }
	noOpset := func() *onnxpb.ModelProto { m := mlpModel(); m.OpsetImport = nil; return m }
	declared := func() *onnxpb.ModelProto {
		m := mlpModel()
		m.Graph.ValueInfo = []*onnxpb.ValueInfoProto{tm.Value("h1", onnxpb.TensorProto_INT32, 1)}
		return m
	}
	shortData := func() *onnxpb.ModelProto {
		m := mlpModel()
		m.Graph.Initializer[0].RawData = m.Graph.Initializer[0].RawData[:8]
		return m
	}
	tests := []struct {
		name    string
		model   func() *onnxpb.ModelProto
		opts    Options
		wantErr string
	}{
		{"no target", mlpModel, Options{}, "no target type"},
		{"subgraph of SequenceMap", sequenceMap, Options{Target: FP16}, "conversion supports subgraphs of If, Loop and Scan only"},
		{"sparse float initializer", sparse, Options{Target: FP16}, `sparse initializer "sp" holds float32 values`},
		{"opset too new", newOpset, Options{Target: FP16}, "opset 99, newer than"},
		{"bf16 before opset 13", ir3Model, Options{Target: BF16}, "needs ai.onnx opset 13 or newer and the model uses opset 9"},
		{"nodes out of order", unordered, Options{Target: FP16}, `reads "h1", which no input, initializer or earlier node defines`},
		{"name defined twice", twice, Options{Target: FP16}, `the name "h1" is defined twice`},
		{"unknown standard op", badOp, Options{Target: FP16}, "Rectify"},
		{"no opset", noOpset, Options{Target: FP16}, "imports no ai.onnx opset"},
		{"wrong declared type", declared, Options{Target: FP16}, `"h1" is declared tensor(int32) but its producer makes tensor(float)`},
		{"custom op without a type", func() *onnxpb.ModelProto { return customOpModel(false) }, Options{Target: FP16},
			`cannot tell the type of "s", output of Swish "swish", a custom operator of domain "com.example"`},
		{"unknown keep node", mlpModel, Options{Target: FP16, KeepNodes: []string{"mm1", "nope"}}, `the model has no node named "nope"`},
		{"unknown keep op", mlpModel, Options{Target: FP16, KeepOps: []string{"Sofmax"}}, `"Sofmax" is not an ONNX operator`},
		{"short data", shortData, Options{Target: FP16}, `tensor "W1" has 8 bytes of data, but its shape [8 16] needs 512`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := convertProto(t, tt.model(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			if errors.Is(err, ErrInternal) {
				t.Fatalf("a problem of the model is reported as an internal error: %v", err)
			}
		})
	}
}

func TestConvertedValuesAreRounded(t *testing.T) {
	orig := mlpModel()
	for _, target := range []Target{FP16, BF16} {
		got, _, err := convertProto(t, proto.Clone(orig).(*onnxpb.ModelProto), Options{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"W1", "b1", "W2"} {
			src, dst := findInit(orig.Graph, name), findInit(got.Graph, name)
			if dst.GetDataType() != int32(target.dataType()) || len(dst.RawData) != len(src.RawData)/2 {
				t.Fatalf("%s: %s, %d bytes", name, tensorType(dst.GetDataType()), len(dst.RawData))
			}
			for i := 0; i < len(src.RawData)/4; i++ {
				v := math.Float32frombits(binary.LittleEndian.Uint32(src.RawData[4*i:]))
				if g, w := binary.LittleEndian.Uint16(dst.RawData[2*i:]), target.format().Convert(v); g != w {
					t.Fatalf("%s[%d] = %#04x, want %#04x (%g)", name, i, g, w, v)
				}
			}
		}
	}
	// float_data becomes raw_data; -inf and tiny values follow IEEE rounding.
	got, _, err := convertProto(t, floatDataModel(), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	w := findInit(got.Graph, "W")
	want := []uint16{0x0000, 0xfc00, half.FromFloat32(3.14159), 0x8000}
	for i, h := range want {
		if g := binary.LittleEndian.Uint16(w.RawData[2*i:]); g != h {
			t.Errorf("W[%d] = %#04x, want %#04x", i, g, h)
		}
	}
	if len(w.FloatData) != 0 {
		t.Error("float_data was kept next to raw_data")
	}
}

func TestOverflowKeepsReadersAndWarns(t *testing.T) {
	got, s, err := convertProto(t, overflowModel(), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, k := range s.KeptNodes {
		if k.Reason == ReasonOverflow {
			kept = append(kept, k.Name)
		}
	}
	if !slices.Equal(kept, []string{"mask_add", "mask_mul"}) {
		t.Errorf("kept for overflow: %v, want mask_add and mask_mul", kept)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `initializer "mask" has 4 values beyond float16's range (up to 1e+05)`) ||
		!strings.Contains(s.Warnings[0], `Add "mask_add", Mul "mask_mul"`) {
		t.Errorf("warnings = %q", s.Warnings)
	}
	if dt := findInit(got.Graph, "mask").GetDataType(); dt != int32(f32) {
		t.Errorf("mask is %s, want float", tensorType(dt))
	}
	if dt := findInit(got.Graph, "fits").GetDataType(); dt != int32(onnxpb.TensorProto_FLOAT16) {
		t.Errorf("65504 fits float16 but fits is %s", tensorType(dt))
	}
	// bfloat16 has float32's range: nothing overflows.
	_, s, err = convertProto(t, overflowModel(), Options{Target: BF16})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 || len(s.KeptNodes) != 0 {
		t.Errorf("bf16: warnings %q, kept %v; want none", s.Warnings, s.KeptNodes)
	}
}

func TestKeptOpsAndIOTypes(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		kept     []string // node names
		inputs   string   // after-type of x
		outputs  string   // after-types of logits, probs
		castsFor []string // tensors that got a Cast
	}{
		{"defaults", Options{Target: FP16}, []string{"softmax"}, "float", "float float", []string{"x", "logits"}},
		{"convert io", Options{Target: FP16, ConvertIO: true}, []string{"softmax"}, "float16", "float16 float16", []string{"logits", "probs"}},
		{"flags", Options{Target: FP16, KeepOps: []string{"Relu"}, KeepNodes: []string{"mm2"}}, []string{"relu", "mm2", "softmax"}, "float", "float float", []string{"x", "h2"}},
		{"no default list", Options{Target: BF16, NoDefaultKeepOps: true}, nil, "float", "float float", []string{"x", "logits", "probs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s, err := convertProto(t, mlpModel(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var kept, casts, outs []string
			for _, k := range s.KeptNodes {
				kept = append(kept, k.Name)
			}
			for _, c := range s.InsertedCasts {
				casts = append(casts, c.Tensor)
			}
			for _, o := range s.Outputs {
				outs = append(outs, o.After)
			}
			if !slices.Equal(kept, tt.kept) {
				t.Errorf("kept %v, want %v", kept, tt.kept)
			}
			if !slices.Equal(casts, tt.castsFor) {
				t.Errorf("casts for %v, want %v", casts, tt.castsFor)
			}
			if len(s.Inputs) != 1 || s.Inputs[0].After != tt.inputs {
				t.Errorf("inputs %+v, want x %s", s.Inputs, tt.inputs)
			}
			if strings.Join(outs, " ") != tt.outputs {
				t.Errorf("outputs %v, want %s", outs, tt.outputs)
			}
		})
	}
}

func TestRetargetedCast(t *testing.T) {
	got, s, err := convertProto(t, castChainModel(), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.RetargetedCasts, []string{`Cast "to_float"`}) {
		t.Errorf("retargeted %v", s.RetargetedCasts)
	}
	if to := attrOf(findNode(got.Graph, "to_float"), "to").GetI(); to != int64(onnxpb.TensorProto_FLOAT16) {
		t.Errorf("to_float makes %s", elemName(int32(to)))
	}
	if to := attrOf(findNode(got.Graph, "round"), "to").GetI(); to != int64(onnxpb.TensorProto_INT64) {
		t.Errorf("round makes %s, want int64 unchanged", elemName(int32(to)))
	}
}

func withUnknown(m proto.Message, num protowire.Number) {
	r := m.ProtoReflect()
	b := protowire.AppendTag(r.GetUnknown(), num, protowire.BytesType)
	r.SetUnknown(protowire.AppendString(b, "future"))
}

func hasUnknown(m proto.Message) bool { return len(m.ProtoReflect().GetUnknown()) > 0 }

func TestUnknownFieldsSurvive(t *testing.T) {
	dir := t.TempDir()
	m := mlpModel()
	big := weights("W1", 1, 0.5, 64, 64) // large enough to stay in the file while converting
	big.Dims = []int64{8, 512}
	m.Graph.Initializer[0] = big
	m.Graph.Node[0].Input[1] = "W1"
	m.Graph.Initializer[1] = weights("b1", 2, 0.1, 512)
	m.Graph.Initializer[2] = weights("W2", 3, 0.5, 512, 4)
	withUnknown(m, 900)
	withUnknown(m.Graph, 901)
	withUnknown(m.Graph.Node[0], 902)
	withUnknown(m.Graph.Initializer[0], 903)
	withUnknown(m.Graph.Input[0], 904)
	withUnknown(m.Graph.Input[0].Type, 905)
	in := filepath.Join(dir, "u.onnx")
	b, _ := proto.Marshal(m)
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := ConvertFile(in, dir, Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(out) != "u.fp16.onnx" {
		t.Errorf("output %s", out)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, got); err != nil {
		t.Fatal(err)
	}
	for what, msg := range map[string]proto.Message{
		"model": got, "graph": got.Graph, "node": findNode(got.Graph, "mm1"), "initializer": findInit(got.Graph, "W1"),
		"input": got.Graph.Input[0], "input type": got.Graph.Input[0].Type,
	} {
		if !hasUnknown(msg) {
			t.Errorf("the %s lost its unknown field", what)
		}
	}
	if dt := findInit(got.Graph, "W1").GetDataType(); dt != int32(onnxpb.TensorProto_FLOAT16) {
		t.Errorf("W1 is %s", tensorType(dt))
	}
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	// A model whose weights are in an external file, as exporters write large models.
	bigMLP := func() *onnxpb.ModelProto {
		m := mlpModel()
		m.Graph.Initializer = []*onnxpb.TensorProto{weights("W1", 1, 0.5, 8, 64), weights("b1", 2, 0.1, 64), weights("W2", 3, 0.5, 64, 4)}
		return m
	}
	orig := bigMLP()
	var ext []byte
	for _, init := range orig.Graph.Initializer {
		loc := tm.External(init.GetName(), init.Dims, "weights.bin", int64(len(ext)), int64(len(init.RawData)))
		ext = append(ext, init.RawData...)
		init.RawData, init.DataLocation, init.ExternalData = nil, loc.DataLocation, loc.ExternalData
	}
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), ext, 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "ext.onnx")
	b, _ := proto.Marshal(orig)
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, s, err := ConvertFile(in, outDir, Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	if s.Files == nil || s.Files.Data != out+".data" || s.Files.DataSize < 1024 {
		t.Fatalf("files %+v, want the data next to %s", s.Files, out)
	}
	back, err := modelio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want := bigMLP()
	for i := range back.Graph.Inits {
		init := &back.Graph.Inits[i]
		var got []byte
		if err := back.ReadData(init, func(c []byte) error { got = append(got, c...); return nil }); err != nil {
			t.Fatal(err)
		}
		name := back.String(init.Name)
		src := findInit(want.Graph, name).RawData
		for i := 0; i < len(src)/4; i++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
			if g := binary.LittleEndian.Uint16(got[2*i:]); g != half.FromFloat32(v) {
				t.Fatalf("%s[%d] = %#04x, want %#04x", name, i, g, half.FromFloat32(v))
			}
		}
	}
	// The input's data file was only read.
	if st, err := os.Stat(filepath.Join(dir, "weights.bin")); err != nil || st.Size() != int64(len(ext)) {
		t.Fatalf("input data file changed: %v", err)
	}
}

func TestWriteNeverOverwritesInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.onnx")
	writeModelFile(t, in, goldenCase{model: mlpModel})
	m, err := modelio.Load(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(m, Options{Target: FP16}); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, filepath.Join(dir, ".", "m.onnx")} {
		if _, err := Write(m, out, outpath.WholeFile); !errors.Is(err, ErrWouldOverwrite) {
			t.Errorf("Write(%s) = %v, want ErrWouldOverwrite", out, err)
		}
	}
	// An external data file of the input is protected too.
	src := tm.Bundled(t, "external_data.onnx")
	for _, f := range []string{"external_data.onnx", "external_data.bin"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(src), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	em, err := modelio.Load(filepath.Join(dir, "external_data.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(em, Options{Target: FP16}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(em, filepath.Join(dir, "external_data.bin"), outpath.WholeFile); !errors.Is(err, ErrWouldOverwrite) {
		t.Errorf("writing over the input's data file: %v", err)
	}
}

func TestAnalyzeWritesNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.onnx")
	writeModelFile(t, in, goldenCase{model: mlpModel})
	s, err := Analyze(in, Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	if s.Nodes.Converted != 4 || s.Nodes.Kept != 1 || s.Files != nil {
		t.Errorf("summary %+v", s.Nodes)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Analyze wrote files: %v", entries)
	}
}

func TestSummaryText(t *testing.T) {
	_, s, err := convertProto(t, overflowModel(), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	s.Files = &Files{Model: "out/m.fp16.onnx", ModelSize: 2048, Data: "out/m.fp16.onnx.data", DataSize: 3 << 20}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "golden", "summary_overflow.txt"), []byte(b.String()))
}

func TestParseTargetAndDefaults(t *testing.T) {
	for in, want := range map[string]Target{"fp16": FP16, "FLOAT16": FP16, "half": FP16, "bf16": BF16, "bfloat16": BF16} {
		if got, err := ParseTarget(in); err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseTarget("fp8"); err == nil {
		t.Error("ParseTarget(fp8) succeeded")
	}
	ops := DefaultKeepOps()
	if !slices.IsSorted(ops) || !slices.Contains(ops, "Softmax") || slices.Contains(ops, "MatMul") {
		t.Errorf("DefaultKeepOps = %v", ops)
	}
	if DefaultKeepReason("LayerNormalization") == "" || DefaultKeepReason("Conv") != "" {
		t.Error("DefaultKeepReason is wrong")
	}
	if OutputName("a/b/model.onnx", BF16) != "model.bf16.onnx" {
		t.Errorf("OutputName = %s", OutputName("a/b/model.onnx", BF16))
	}
}

func FuzzConvert(f *testing.F) {
	for _, c := range goldenCases() {
		b, err := proto.Marshal(c.model())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, c.opts.Target == BF16)
	}
	f.Fuzz(func(t *testing.T, data []byte, bf16 bool) {
		m := &onnxpb.ModelProto{}
		if proto.Unmarshal(data, m) != nil {
			return
		}
		target := FP16
		if bf16 {
			target = BF16
		}
		mm, err := fromProto(m)
		if err != nil {
			return
		}
		_, err = Convert(mm, Options{Target: target})
		if errors.Is(err, ErrInternal) {
			t.Fatalf("internal error on a model that analysed: %v", err)
		}
	})
}

// TestVerifyCatchesInconsistentRewrites converts a model, then breaks the
// converted compact graph the ways a faulty rewrite could, and checks that
// the check of the result (verify) refuses each: it reads the changes
// themselves, not the conversion's decisions.
func TestVerifyCatchesInconsistentRewrites(t *testing.T) {
	find := func(t *testing.T, m *modelio.Model, name string) int {
		t.Helper()
		g := m.Graph
		for i := range g.Nodes {
			if m.String(g.Nodes[i].Name) == name {
				return i
			}
		}
		t.Fatalf("no node %q", name)
		return -1
	}
	tests := []struct {
		name   string
		tamper func(t *testing.T, m *modelio.Model)
	}{
		{"untouched", func(t *testing.T, m *modelio.Model) {}},
		{"a weight left in float32", func(t *testing.T, m *modelio.Model) {
			m.Graph.Inits[0].Lower = false // W1, read by mm1 with a float16 input
		}},
		{"an input Cast dropped", func(t *testing.T, m *modelio.Model) {
			cast := int32(find(t, m, "x_fp16_cast"))
			var order []int32
			for _, i := range m.Graph.Order {
				if i != cast {
					order = append(order, i)
				}
			}
			m.Graph.Order = order
		}},
		{"a reader not renamed to its Cast", func(t *testing.T, m *modelio.Model) {
			i := find(t, m, "mm1")
			m.Graph.NodeInputs(i)[0] = m.NewStr("x")
		}},
		{"a Cast to the wrong type", func(t *testing.T, m *modelio.Model) {
			np, err := m.Graph.NodeProto(find(t, m, "logits_cast"))
			if err != nil {
				t.Fatal(err)
			}
			setDtype(np, "to", onnxpb.TensorProto_FLOAT16)
		}},
		{"an output declared with the wrong type", func(t *testing.T, m *modelio.Model) {
			m.Graph.Outputs[0].Type = tm.Value("logits", f16, "batch", 4).Type
		}},
		{"a node out of order", func(t *testing.T, m *modelio.Model) {
			o := m.Graph.Order
			o[0], o[1] = o[1], o[0]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := fromProto(mlpModel())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Convert(m, Options{Target: FP16}); err != nil {
				t.Fatal(err)
			}
			tt.tamper(t, m)
			err = verify(m, FP16, opschema.Default(), nil)
			if tt.name == "untouched" {
				if err != nil {
					t.Fatalf("verify of the converted model: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInternal) {
				t.Fatalf("verify = %v, want ErrInternal", err)
			}
		})
	}
}

// TestLargeGraphNames converts a chain of Identity nodes long enough that
// the names go into the tables in large batches (analysis.flush), and
// checks that a name defined twice is still found, as the first such name.
func TestLargeGraphNames(t *testing.T) {
	const n = 70000
	chain := func(dups map[int]string) *onnxpb.ModelProto {
		nodes := make([]*onnxpb.NodeProto, n)
		prev := "x"
		for i := range nodes {
			out := fmt.Sprintf("v%d", i)
			if d, ok := dups[i]; ok {
				out = d
			}
			nodes[i] = tm.Node(fmt.Sprintf("n%d", i), "Identity", []string{prev}, []string{out})
			prev = out
		}
		return tm.Model(graph("chain", nodes, nil, []*onnxpb.ValueInfoProto{tm.Value("x", f32, 4)}, []*onnxpb.ValueInfoProto{tm.Value(prev, f32, 4)}))
	}
	_, s, err := convertProto(t, chain(nil), Options{Target: FP16})
	if err != nil {
		t.Fatal(err)
	}
	if s.Nodes.Converted != n || len(s.InsertedCasts) != 2 {
		t.Fatalf("converted %d nodes with %d Casts, want %d and 2", s.Nodes.Converted, len(s.InsertedCasts), n)
	}
	// Node 60000 repeats v100 and node 50000 repeats v200: v200 is the
	// first name defined twice, in the order of the graph.
	_, _, err = convertProto(t, chain(map[int]string{60000: "v100", 50000: "v200"}), Options{Target: FP16})
	if err == nil || !strings.Contains(err.Error(), `the name "v200" is defined twice`) {
		t.Fatalf("Convert = %v, want v200 defined twice", err)
	}
}
