package buildkey

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// pinnedModels are the models whose hashes testdata/hashes.golden pins: the bundled models,
// a tensor in every place the hasher looks with every data placement, the framing cases,
// unknown fields of every wire type (groups included) at every level the hasher walks, and
// subgraphs nested as deep as the first hasher allowed. The hashes are the engine cache's
// keys: a change of any of them orphans every cached engine, and must come with a new Schema.
func pinnedModels(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	add := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	addModel := func(name string, m *onnxpb.ModelProto) {
		t.Helper()
		b, err := tm.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		add(name, b)
	}
	paths, err := filepath.Glob(filepath.Join(tm.BundledDir(t), "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".onnx") {
			names = append(names, filepath.Base(p))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(100, 200, 300, 400, 500), 0o644); err != nil {
		t.Fatal(err)
	}

	// A tensor in every place, with every placement of its data.
	inline := func() *onnxpb.TensorProto { return tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4}) }
	tensors := map[string]func() *onnxpb.TensorProto{
		"inline":   inline,
		"external": func() *onnxpb.TensorProto { return tm.External("W", []int64{4}, "w.bin", 0, 16) },
		"external_at_4_no_length": func() *onnxpb.TensorProto {
			w := tm.External("W", []int64{4}, "w.bin", 4, 0)
			w.ExternalData = w.ExternalData[:2]
			return w
		},
		"default_with_external_data": func() *onnxpb.TensorProto {
			w := inline()
			w.ExternalData = entries("w.bin", 0, 16)
			return w
		},
		"explicit_default": func() *onnxpb.TensorProto {
			return withUnknown(inline(), varintField(onnx.FieldTensorDataLocation, 0))
		},
		"external_with_raw_data": func() *onnxpb.TensorProto {
			w := tm.External("W", []int64{4}, "w.bin", 0, 16)
			w.RawData = f32(1, 2, 3, 4)
			return w
		},
		"external_with_float_data": func() *onnxpb.TensorProto {
			w := tm.External("W", []int64{4}, "w.bin", 0, 16)
			w.FloatData = []float32{1, 2, 3, 4}
			return w
		},
		"location_1<<32|1": func() *onnxpb.TensorProto {
			w := withUnknown(inline(), varintField(onnx.FieldTensorDataLocation, 1<<32|1))
			w.ExternalData = entries("w.bin", 0, 16)
			return w
		},
		"location_2": func() *onnxpb.TensorProto {
			w := withUnknown(inline(), varintField(onnx.FieldTensorDataLocation, 2))
			w.ExternalData = entries("w.bin", 0, 16)
			return w
		},
		"typed_data": func() *onnxpb.TensorProto {
			return &onnxpb.TensorProto{Name: "W", DataType: 7, Dims: []int64{2}, Int64Data: []int64{-1, 1 << 40},
				Int32Data: []int32{3}, Uint64Data: []uint64{5}, DoubleData: []float64{0.5}, StringData: [][]byte{[]byte("s")}}
		},
		"unpacked_data": func() *onnxpb.TensorProto {
			w := withUnknown(&onnxpb.TensorProto{Name: "W", DataType: 1, Dims: []int64{2}},
				field(onnx.FieldTensorFloatData, protowire.Fixed32Type, []byte{0, 0, 0x80, 0x3f}),
				field(onnx.FieldTensorDoubleData, protowire.Fixed64Type, make([]byte, 8)),
				varintField(onnx.FieldTensorInt64Data, 7), varintField(onnx.FieldTensorInt32Data, 1<<31), varintField(onnx.FieldTensorUint64Data, 1<<63))
			return w
		},
	}
	for _, where := range []string{"initializer", "constant", "subgraph", "function", "function default"} {
		for _, name := range slices.Sorted(maps.Keys(tensors)) {
			addModel(fmt.Sprintf("placed_%s_%s.onnx", strings.ReplaceAll(where, " ", "_"), name), placed(where, tensors[name]()))
		}
	}

	// The buildkey_test model and its variants.
	addModel("model_base.onnx", model([]float32{1, 2, 3, 4}, "Relu", 0))
	addModel("model_weight.onnx", model([]float32{1, 2, 3, 5}, "Relu", 0))
	addModel("model_branch.onnx", model([]float32{1, 2, 3, 4}, "Relu", 7))
	addModel("model_op.onnx", model([]float32{1, 2, 3, 4}, "Sigmoid", 0))

	// Unknown fields of every wire type, a group with fields inside, at every level walked.
	unknown := cat(
		varintField(900, 1<<40),
		field(901, protowire.Fixed32Type, []byte{1, 2, 3, 4}),
		field(902, protowire.Fixed64Type, []byte{1, 2, 3, 4, 5, 6, 7, 8}),
		field(903, protowire.BytesType, []byte("future")),
		protowire.AppendTag(nil, 904, protowire.StartGroupType),
		varintField(1, 5),
		field(2, protowire.BytesType, []byte("in a group")),
		protowire.AppendTag(nil, 7, protowire.StartGroupType),
		protowire.AppendTag(nil, 7, protowire.EndGroupType),
		protowire.AppendTag(nil, 904, protowire.EndGroupType),
	)
	for _, level := range []string{"model", "graph", "node", "attribute", "tensor", "subgraph", "function", "sparse"} {
		m := model([]float32{1, 2, 3, 4}, "Relu", 0)
		switch level {
		case "model":
			withUnknown(m, unknown)
		case "graph":
			withUnknown(m.Graph, unknown)
		case "node":
			withUnknown(m.Graph.Node[0], unknown)
		case "attribute":
			withUnknown(m.Graph.Node[1].Attribute[0], unknown)
		case "tensor":
			withUnknown(m.Graph.Initializer[0], unknown)
		case "subgraph":
			withUnknown(m.Graph.Node[5].Attribute[0].G, unknown)
		case "function":
			m = placed("function", inline())
			withUnknown(m.Functions[0], unknown)
		case "sparse":
			m.Graph.SparseInitializer = []*onnxpb.SparseTensorProto{withUnknown(&onnxpb.SparseTensorProto{
				Values: tm.Floats("sv", []int64{2}, []float32{1, 2}), Indices: tm.Int64s("si", []int64{2}, 0, 3), Dims: []int64{4},
			}, unknown)}
		}
		addModel("unknown_in_"+level+".onnx", m)
	}

	// The framing cases, by hand.
	bytes := protowire.BytesType
	relu := field(onnx.FieldNodeOpType, bytes, []byte("Relu"))
	hand := func(graph []byte, rest ...[]byte) []byte {
		return cat(append([][]byte{field(onnx.FieldModelGraph, bytes, graph)}, rest...)...)
	}
	add("hand_end_like.onnx", hand(field(onnx.FieldGraphNode, bytes, cat(relu, field(15, protowire.Fixed32Type, []byte{0x12, 0x02, 'a', 'b'}))),
		field(onnx.FieldModelDomain, bytes, []byte("Q}"))))
	add("hand_subgraph.onnx", hand(field(onnx.FieldGraphNode, bytes, field(onnx.FieldNodeAttribute, bytes, field(onnx.FieldAttrG, bytes, field(onnx.FieldGraphNode, bytes, relu))))))
	add("hand_empty.onnx", nil)
	add("hand_two_graphs.onnx", cat(hand(field(onnx.FieldGraphNode, bytes, relu)), hand(field(onnx.FieldGraphName, bytes, []byte("second")))))
	add("hand_graph_as_varint.onnx", varintField(onnx.FieldModelGraph, 3))

	// Subgraphs nested 20 deep: a tensor at depth 62, within the first hasher's limit of 64.
	g := &onnxpb.GraphProto{Name: "g20", Initializer: []*onnxpb.TensorProto{inline()},
		Node: []*onnxpb.NodeProto{tm.Node("c", "Constant", nil, []string{"k"}, tm.AttrTensor("value", inline()))}}
	for d := 19; d >= 0; d-- {
		g = &onnxpb.GraphProto{Name: fmt.Sprintf("g%d", d),
			Node: []*onnxpb.NodeProto{tm.Node(fmt.Sprintf("if%d", d), "If", []string{"c"}, []string{"y"}, tm.AttrGraph("then_branch", g))}}
	}
	addModel("nested_20.onnx", tm.Model(g))

	// The scale models, one with external data.
	for _, c := range []struct {
		name  string
		write func(f *os.File) error
	}{
		{"many_nodes.onnx", func(f *os.File) error { return tm.WriteManyNodes(f, 300) }},
		{"identity_chain.onnx", func(f *os.File) error { return tm.WriteIdentityChain(f, 300) }},
	} {
		f, err := os.Create(filepath.Join(dir, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		names = append(names, c.name)
	}
	if err := tm.WriteExternalChain(filepath.Join(dir, "external_chain.onnx"), "external_chain.bin", 2); err != nil {
		t.Fatal(err)
	}
	names = append(names, "external_chain.onnx")
	return names
}

// TestPinnedHashes: the hashes of the pinned models are those of testdata/hashes.golden, so no
// change to the hasher or to the reader under it changes the key of a model by accident.
func TestPinnedHashes(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	for _, name := range pinnedModels(t, dir) {
		h, err := HashModel(filepath.Join(dir, name))
		if err != nil {
			fmt.Fprintf(&out, "%s error\n", name)
			continue
		}
		fmt.Fprintf(&out, "%s %s %s %d %d %s\n", name, h.Graph, h.Weights, h.Bytes, h.ExternalBytes, Short(key(h)))
	}
	goldenfile.Check(t, filepath.Join("testdata", "hashes.golden"), []byte(out.String()))
}
