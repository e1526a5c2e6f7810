package modelio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// constNode returns a Constant (or ConstantOfShape) node with the given
// attributes.
func constNode(name, op, domain string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{Name: name, OpType: op, Domain: domain, Output: []string{name + "_out"}, Attribute: attrs}
}

func tensorAttr(t *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: "value", Type: onnxpb.AttributeProto_TENSOR, T: t, DocString: "the value"}
}

// TestConstantValueViews checks which Constant forms Load keeps as views of
// the node's bytes (the common ones) and which it decodes, and that a view
// marked Lower is written with exactly its converted data and every other
// field of the node, the attribute and the tensor kept.
func TestConstantValueViews(t *testing.T) {
	f32 := int32(onnxpb.TensorProto_FLOAT)
	rawT := &onnxpb.TensorProto{Name: "r", Dims: []int64{2, 2}, DataType: f32, RawData: floats(4, 0.25), DocString: "doc"}
	unknown(rawT, 999, 5)
	floatT := &onnxpb.TensorProto{Name: "f", Dims: []int64{3}, DataType: f32, FloatData: []float32{1.5, -2, 65504}}
	intT := &onnxpb.TensorProto{Name: "i", Dims: []int64{1}, DataType: int32(onnxpb.TensorProto_INT64), Int64Data: []int64{4}}
	segT := &onnxpb.TensorProto{Name: "s", Dims: []int64{1}, DataType: f32, RawData: floats(1, 1), Segment: &onnxpb.TensorProto_Segment{Begin: 0, End: 1}}
	withMeta := constNode("meta", "Constant", "", tensorAttr(proto.Clone(rawT).(*onnxpb.TensorProto)))
	withMeta.MetadataProps = []*onnxpb.StringStringEntryProto{{Key: "k", Value: "v"}}
	nodes := []*onnxpb.NodeProto{
		constNode("raw", "Constant", "", tensorAttr(rawT)),
		constNode("fd", "Constant", "", tensorAttr(floatT)),
		constNode("int", "Constant", "", tensorAttr(intT)),
		constNode("cos", "ConstantOfShape", "", tensorAttr(&onnxpb.TensorProto{Dims: []int64{1}, DataType: f32, RawData: floats(2, 3)[4:]})),
		constNode("vf", "Constant", "", &onnxpb.AttributeProto{Name: "value_float", Type: onnxpb.AttributeProto_FLOAT, F: 2}),
		constNode("seg", "Constant", "", tensorAttr(segT)),
		constNode("dom", "Constant", "ai.onnx", tensorAttr(proto.Clone(rawT).(*onnxpb.TensorProto))),
		constNode("other", "Identity", "", tensorAttr(proto.Clone(rawT).(*onnxpb.TensorProto))),
		withMeta,
	}
	unknown(nodes[0], 998, 1)
	orig := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}},
		Graph: &onnxpb.GraphProto{Name: "g", Node: nodes}}
	m, err := FromProto(orig)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	views := map[string]bool{"raw": true, "fd": true, "int": true, "cos": true}
	for i := range g.Nodes {
		name := m.String(g.Nodes[i].Name)
		if got := g.Value(i) != nil; got != views[name] {
			t.Errorf("node %s: view = %v, want %v", name, got, views[name])
		}
	}
	// Decoded on load: the tensor-holding forms without a view (value_float
	// holds no tensor: it is decoded when the conversion asks).
	if want := len(nodes) - len(views) - 1; len(g.decoded) != want {
		t.Errorf("%d nodes decoded on load, want %d", len(g.decoded), want)
	}
	var fd []byte
	for _, v := range floatT.FloatData {
		fd = binary.LittleEndian.AppendUint32(fd, math.Float32bits(v))
	}
	if got := dataOf(t, m, g.Value(1)); !bytes.Equal(got, fd) {
		t.Fatalf("the float_data view reads %v, want %v", got, fd)
	}
	if dt := g.Value(2).DataType; dt != int32(onnxpb.TensorProto_INT64) {
		t.Errorf("int64 view has data type %d", dt)
	}

	// Lower the float views: Write encodes them with the converted data.
	conv := func(dst, src []byte) {
		for i := 0; i < len(src)/4; i++ {
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(binary.LittleEndian.Uint32(src[4*i:])>>16)^0x1234)
		}
	}
	m.SetLowering(Lowering{DataType: int32(onnxpb.TensorProto_BFLOAT16), Convert: conv})
	for _, i := range []int{0, 1, 3} {
		g.Value(i).Lower = true
		if m.TypeOf(g.Value(i)) != int32(onnxpb.TensorProto_BFLOAT16) {
			t.Fatal("TypeOf a lowered view is not the lowering's type")
		}
	}
	got, err := m.Decode()
	if err != nil {
		t.Fatal(err)
	}
	want := proto.Clone(orig).(*onnxpb.ModelProto)
	lower := func(tp *onnxpb.TensorProto) {
		var src []byte
		if len(tp.RawData) > 0 {
			src = tp.RawData
		} else {
			for _, v := range tp.FloatData {
				src = binary.LittleEndian.AppendUint32(src, math.Float32bits(v))
			}
		}
		dst := make([]byte, len(src)/2)
		conv(dst, src)
		tp.RawData, tp.FloatData, tp.DataType = dst, nil, int32(onnxpb.TensorProto_BFLOAT16)
	}
	for _, i := range []int{0, 1, 3} {
		lower(want.Graph.Node[i].Attribute[0].T)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("written model differs:\n got %v\nwant %v", got.Graph, want.Graph)
	}
	if len(got.Graph.Node[0].ProtoReflect().GetUnknown()) == 0 || len(got.Graph.Node[0].Attribute[0].T.ProtoReflect().GetUnknown()) == 0 {
		t.Error("unknown fields of a lowered constant were dropped")
	}
	// A lowered view's node must not be decoded as well: Write refuses.
	if _, err := g.NodeProto(0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Decode(); err == nil {
		t.Error("Write encoded a node both decoded and lowered as a view")
	}
}

// TestSubgraphsAreNotKeptDecoded checks that Load keeps a node's subgraphs
// in compact form only (the decoded graph is dropped) and that Write
// encodes them back, nested ones included, into the same model.
func TestSubgraphsAreNotKeptDecoded(t *testing.T) {
	f32 := int32(onnxpb.TensorProto_FLOAT)
	vi := func(name string) *onnxpb.ValueInfoProto { return &onnxpb.ValueInfoProto{Name: name} }
	branch := func(name string) *onnxpb.GraphProto {
		return &onnxpb.GraphProto{Name: name, Output: []*onnxpb.ValueInfoProto{vi(name + "_o")}, Node: []*onnxpb.NodeProto{
			constNode(name, "Constant", "", tensorAttr(&onnxpb.TensorProto{Name: name + "_v", Dims: []int64{1}, DataType: f32, RawData: floats(2, 1)[4:]})),
			{Name: name + "_id", OpType: "Identity", Input: []string{name + "_out"}, Output: []string{name + "_o"}},
		}}
	}
	iff := &onnxpb.NodeProto{Name: "if", OpType: "If", Input: []string{"c"}, Output: []string{"y"}, Attribute: []*onnxpb.AttributeProto{
		{Name: "then_branch", Type: onnxpb.AttributeProto_GRAPH, G: branch("then")},
		{Name: "else_branch", Type: onnxpb.AttributeProto_GRAPH, G: branch("else"), DocString: "else"},
	}}
	body := &onnxpb.GraphProto{Name: "body", Node: []*onnxpb.NodeProto{iff}, Input: []*onnxpb.ValueInfoProto{vi("i"), vi("c")}, Output: []*onnxpb.ValueInfoProto{vi("c"), vi("y")}}
	loop := &onnxpb.NodeProto{Name: "loop", OpType: "Loop", Input: []string{"", "cond"}, Output: []string{"out"}, DocString: "loop", Attribute: []*onnxpb.AttributeProto{
		{Name: "body", Type: onnxpb.AttributeProto_GRAPH, G: body},
	}}
	unknown(loop, 998, 1)
	orig := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}},
		Graph: &onnxpb.GraphProto{Name: "g", Node: []*onnxpb.NodeProto{loop}}}
	m, err := FromProto(orig)
	if err != nil {
		t.Fatal(err)
	}
	np, err := m.Graph.NodeProto(0)
	if err != nil {
		t.Fatal(err)
	}
	if np.Attribute[0].G != nil {
		t.Error("the Loop's decoded body is kept next to its compact one")
	}
	sub := m.Graph.Subgraphs[0]
	if len(sub) != 1 || sub[0].G == nil || len(sub[0].G.Subgraphs[0]) != 2 {
		t.Fatalf("subgraphs %+v", sub)
	}
	// Parsed where they lie, not decoded and encoded again into the arena.
	if sub[0].G.Nodes[0].raw.off&arenaBit != 0 || sub[0].G.Subgraphs[0][1].G.Nodes[0].raw.off&arenaBit != 0 {
		t.Error("a subgraph was decoded and encoded again")
	}
	for i := 0; i < 2; i++ { // the second Write must not see the first's changes
		got, err := m.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, orig) {
			t.Fatalf("written model differs:\n got %v\nwant %v", got.Graph, orig.Graph)
		}
	}
}

// TestReserveGrowsToTheRestOfTheFile checks how Load's buffer grows: to
// twice its size, or to all the rest of the file can add when that is
// within a quarter more, never copying what it holds wrong.
func TestReserveGrowsToTheRestOfTheFile(t *testing.T) {
	const size = 1000
	for _, c := range []struct {
		n, pos  int64
		wantCap int
	}{
		{10, 900, 100 + 100 + 16}, // the rest is near: all of it
		{10, 0, 200},              // the rest is far: twice
		{500, 0, 600},             // more than twice is needed
		{0, 0, 100},               // it fits: no growth
	} {
		m := &Model{buf: make([]byte, 100)}
		for i := range m.buf {
			m.buf[i] = byte(i)
		}
		l := &loader{w: onnx.NewWalker(bytes.NewReader(make([]byte, size)), size, "m.onnx"), m: m}
		l.reserve(c.n, c.pos)
		if cap(m.buf) != c.wantCap || len(m.buf) != 100 || m.buf[99] != 99 {
			t.Errorf("reserve(%d, %d): len %d cap %d, want len 100 cap %d", c.n, c.pos, len(m.buf), cap(m.buf), c.wantCap)
		}
	}
}

// TestSubgraphExternalData checks that a subgraph whose initializer keeps
// its data in an external file is read with the data brought into memory,
// and written with it inline.
func TestSubgraphExternalData(t *testing.T) {
	dir := t.TempDir()
	data := floats(4, 2)
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ext := &onnxpb.TensorProto{Name: "w", Dims: []int64{4}, DataType: int32(onnxpb.TensorProto_FLOAT), DataLocation: onnxpb.TensorProto_EXTERNAL,
		ExternalData: []*onnxpb.StringStringEntryProto{{Key: "location", Value: "w.bin"}}}
	body := &onnxpb.GraphProto{Name: "body", Initializer: []*onnxpb.TensorProto{ext},
		Node: []*onnxpb.NodeProto{{Name: "id", OpType: "Identity", Input: []string{"w"}, Output: []string{"y"}}}}
	loop := &onnxpb.NodeProto{Name: "loop", OpType: "Loop", Output: []string{"out"}, Attribute: []*onnxpb.AttributeProto{
		{Name: "body", Type: onnxpb.AttributeProto_GRAPH, G: body},
	}}
	orig := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}},
		Graph: &onnxpb.GraphProto{Name: "g", Node: []*onnxpb.NodeProto{loop}}}
	in := filepath.Join(dir, "m.onnx")
	writeProto(t, in, orig)
	m, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Graph.Subgraphs[0][0].G
	if !m.External || sg.Inits[0].InFile() || !bytes.Equal(dataOf(t, m, &sg.Inits[0]), data) {
		t.Fatal("the subgraph's external data was not read into memory")
	}
	got, err := m.Decode()
	if err != nil {
		t.Fatal(err)
	}
	w := got.Graph.Node[0].Attribute[0].G.Initializer[0]
	if !bytes.Equal(w.RawData, data) || w.DataLocation != onnxpb.TensorProto_DEFAULT || len(w.ExternalData) != 0 {
		t.Fatalf("the subgraph's initializer was written as %v", w)
	}
}

// FuzzLoadViews is FuzzLoad from models with the forms Load reads as views:
// Constants of every kind and nested subgraphs. Whatever loads must encode
// to a model that decodes, with its constants lowered too.
func FuzzLoadViews(f *testing.F) {
	f32 := int32(onnxpb.TensorProto_FLOAT)
	c := constNode("c", "Constant", "", tensorAttr(&onnxpb.TensorProto{Name: "v", Dims: []int64{2}, DataType: f32, FloatData: []float32{1, 2}}))
	body := &onnxpb.GraphProto{Name: "body", Node: []*onnxpb.NodeProto{c, {Name: "if", OpType: "If", Input: []string{"c_out"}, Output: []string{"y"},
		Attribute: []*onnxpb.AttributeProto{{Name: "then_branch", Type: onnxpb.AttributeProto_GRAPH, G: &onnxpb.GraphProto{Name: "t"}}}}}}
	loop := &onnxpb.NodeProto{Name: "loop", OpType: "Loop", Output: []string{"out"}, Attribute: []*onnxpb.AttributeProto{{Name: "body", Type: onnxpb.AttributeProto_GRAPH, G: body}}}
	m := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}},
		Graph: &onnxpb.GraphProto{Name: "g", Node: []*onnxpb.NodeProto{
			constNode("raw", "Constant", "", tensorAttr(&onnxpb.TensorProto{Name: "r", Dims: []int64{1}, DataType: f32, RawData: floats(2, 1)[4:]})),
			constNode("cos", "ConstantOfShape", "", tensorAttr(&onnxpb.TensorProto{DataType: f32, FloatData: []float32{3}})),
			loop,
		}}}
	good, _ := proto.Marshal(m)
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		m.SetLowering(Lowering{DataType: int32(onnxpb.TensorProto_FLOAT16), Convert: func(dst, src []byte) {}})
		var lower func(g *Graph)
		lower = func(g *Graph) {
			for i := range g.Values {
				if g.Values[i].DataType == f32 {
					g.Values[i].Lower = true
				}
			}
			for _, ss := range g.Subgraphs {
				for _, s := range ss {
					if s.G != nil {
						lower(s.G)
					}
				}
			}
		}
		lower(m.Graph)
		var buf bytes.Buffer
		if _, err := m.Encode(&buf); err != nil {
			return
		}
		if err := proto.Unmarshal(buf.Bytes(), &onnxpb.ModelProto{}); err != nil {
			t.Fatalf("encoded model does not decode: %v", err)
		}
	})
}

// TestDeeplyNestedSubgraphs checks that subgraphs nested deeper than the
// in-place parse goes are read the decoded way, and written back whole.
func TestDeeplyNestedSubgraphs(t *testing.T) {
	const depth = maxViewDepth + 8
	var inner *onnxpb.GraphProto
	for d := 0; d < depth; d++ {
		nodes := []*onnxpb.NodeProto{constNode(fmt.Sprintf("c%d", d), "Constant", "", tensorAttr(&onnxpb.TensorProto{Dims: []int64{1}, DataType: int32(onnxpb.TensorProto_FLOAT), RawData: floats(2, 1)[4:]}))}
		if inner != nil {
			nodes = append(nodes, &onnxpb.NodeProto{Name: fmt.Sprintf("loop%d", d), OpType: "Loop", Output: []string{fmt.Sprintf("o%d", d)},
				Attribute: []*onnxpb.AttributeProto{{Name: "body", Type: onnxpb.AttributeProto_GRAPH, G: inner}}})
		}
		inner = &onnxpb.GraphProto{Name: fmt.Sprintf("g%d", d), Node: nodes}
	}
	orig := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}}, Graph: inner}
	m, err := FromProto(orig)
	if err != nil {
		t.Fatal(err)
	}
	g, levels, inPlace := m.Graph, 0, 0
	for g != nil {
		levels++
		if len(g.Nodes) > 0 && g.Nodes[0].raw.off&arenaBit == 0 {
			inPlace++
		}
		var next *Graph
		for _, ss := range g.Subgraphs {
			next = ss[0].G
		}
		g = next
	}
	if levels != depth || inPlace != maxViewDepth+1 {
		t.Errorf("%d levels, %d parsed in place; want %d and %d", levels, inPlace, depth, maxViewDepth+1)
	}
	got, err := m.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, orig) {
		t.Fatal("the nested model changed")
	}
}
