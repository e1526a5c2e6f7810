package buildkey

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// f32 is vals as little-endian float32 bytes, the layout of raw_data and of external data.
func f32(vals ...float32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// entries are the external_data entries of a tensor whose data is in location.
func entries(location string, offset, length int64) []*onnxpb.StringStringEntryProto {
	return tm.External("", nil, location, offset, length).ExternalData
}

// withUnknown appends raw fields to m's encoding, for fields the generated code would not
// write (an explicit data_location DEFAULT, a field of the wrong wire type).
func withUnknown[M proto.Message](m M, raw ...[]byte) M {
	r := m.ProtoReflect()
	u := r.GetUnknown()
	for _, b := range raw {
		u = append(u, b...)
	}
	r.SetUnknown(u)
	return m
}

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

// placed puts tensor w where the hasher must find it: an initializer, a Constant's value, an
// initializer of a subgraph, a Constant inside a local function, or an attribute default of
// a local function.
func placed(where string, w *onnxpb.TensorProto) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{
		Name:   "g",
		Input:  []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 4)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, 4)},
	}
	m := tm.Model(g)
	switch where {
	case "initializer":
		g.Initializer = []*onnxpb.TensorProto{w}
		g.Node = []*onnxpb.NodeProto{tm.Node("add", "Add", []string{"x", "W"}, []string{"y"})}
	case "constant":
		g.Node = []*onnxpb.NodeProto{
			tm.Node("c", "Constant", nil, []string{"W"}, tm.AttrTensor("value", w)),
			tm.Node("add", "Add", []string{"x", "W"}, []string{"y"}),
		}
	case "subgraph":
		branch := &onnxpb.GraphProto{
			Name:        "then",
			Initializer: []*onnxpb.TensorProto{w},
			Node:        []*onnxpb.NodeProto{tm.Node("then/add", "Add", []string{"x", "W"}, []string{"t"})},
			Output:      []*onnxpb.ValueInfoProto{tm.Value("t", tm.F32, 4)},
		}
		g.Node = []*onnxpb.NodeProto{
			tm.Node("cond", "Constant", nil, []string{"c"}, tm.AttrTensor("value", &onnxpb.TensorProto{Name: "c", DataType: 9, Int32Data: []int32{1}})),
			tm.Node("if", "If", []string{"c"}, []string{"y"}, tm.AttrGraph("then_branch", branch), tm.AttrGraph("else_branch", branch)),
		}
	case "function", "function default":
		fn := &onnxpb.FunctionProto{
			Name: "AddW", Domain: "local", Input: []string{"x"}, Output: []string{"y"},
			OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: "", Version: tm.Opset}},
		}
		if where == "function" {
			fn.Node = []*onnxpb.NodeProto{
				tm.Node("c", "Constant", nil, []string{"W"}, tm.AttrTensor("value", w)),
				tm.Node("add", "Add", []string{"x", "W"}, []string{"y"}),
			}
		} else {
			fn.AttributeProto = []*onnxpb.AttributeProto{tm.AttrTensor("w", w)}
			c := tm.Node("c", "Constant", nil, []string{"W"}, &onnxpb.AttributeProto{Name: "value", RefAttrName: "w", Type: onnxpb.AttributeProto_TENSOR})
			fn.Node = []*onnxpb.NodeProto{c, tm.Node("add", "Add", []string{"x", "W"}, []string{"y"})}
		}
		m.Functions = []*onnxpb.FunctionProto{fn}
		m.OpsetImport = append(m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: "local", Version: 1})
		call := tm.Node("call", "AddW", []string{"x"}, []string{"y"})
		call.Domain = "local"
		g.Node = []*onnxpb.NodeProto{call}
	default:
		panic(where)
	}
	return m
}

// key is the full build key of a model with hashes h, everything else fixed.
func key(h ModelHashes) string {
	p := baseParts()
	p.Graph, p.Weights = h.Graph, h.Weights
	return p.Key()
}

// TestDataLocation: a tensor's data is what a reader takes, by its data_location: the inline
// data when it is DEFAULT (or absent), the external bytes when it is EXTERNAL, never both. A
// model that holds both kinds keys as the model with only the bytes read, and no file is read
// for a DEFAULT tensor, whatever its external_data entries say.
func TestDataLocation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(100, 200, 300, 400), 0o644); err != nil {
		t.Fatal(err)
	}
	inline := func() *onnxpb.TensorProto { return tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4}) }
	both := func(loc onnxpb.TensorProto_DataLocation) *onnxpb.TensorProto {
		w := inline()
		w.ExternalData, w.DataLocation = entries("w.bin", 0, 16), loc
		return w
	}
	tensors := []struct {
		name string
		w    func() *onnxpb.TensorProto
		// reads is what a reader takes: "inline" [1,2,3,4] or "external" [100,200,300,400].
		reads    string
		external int64 // bytes read from w.bin
	}{
		{"inline only", inline, "inline", 0},
		{"external only", func() *onnxpb.TensorProto { return tm.External("W", []int64{4}, "w.bin", 0, 16) }, "external", 16},
		{"inline [100,200,300,400]", func() *onnxpb.TensorProto {
			return tm.Floats("W", []int64{4}, []float32{100, 200, 300, 400})
		}, "external", 0},
		{"DEFAULT with external_data", func() *onnxpb.TensorProto { return both(onnxpb.TensorProto_DEFAULT) }, "inline", 0},
		{"explicit DEFAULT with external_data", func() *onnxpb.TensorProto {
			return withUnknown(both(onnxpb.TensorProto_DEFAULT), varintField(onnx.FieldTensorDataLocation, 0))
		}, "inline", 0},
		{"EXTERNAL with inline raw_data", func() *onnxpb.TensorProto { return both(onnxpb.TensorProto_EXTERNAL) }, "external", 16},
		{"EXTERNAL with inline float_data", func() *onnxpb.TensorProto {
			w := tm.External("W", []int64{4}, "w.bin", 0, 16)
			w.FloatData = []float32{1, 2, 3, 4}
			return w
		}, "external", 16},
		{"DEFAULT with external_data of a missing file", func() *onnxpb.TensorProto {
			w := inline()
			w.ExternalData = entries("absent.bin", 0, 16)
			return w
		}, "inline", 0},
		{"DEFAULT with external_data outside the folder", func() *onnxpb.TensorProto {
			w := inline()
			w.ExternalData = entries("../secret.bin", 0, 16)
			return w
		}, "inline", 0},
		{"DEFAULT with external_data without a location", func() *onnxpb.TensorProto {
			w := inline()
			w.ExternalData = []*onnxpb.StringStringEntryProto{{Key: "offset", Value: "x"}}
			return w
		}, "inline", 0},
		{"last data_location wins: EXTERNAL then DEFAULT", func() *onnxpb.TensorProto {
			return withUnknown(both(onnxpb.TensorProto_EXTERNAL), varintField(onnx.FieldTensorDataLocation, 0))
		}, "inline", 0},
	}
	for _, where := range []string{"initializer", "constant", "subgraph", "function", "function default"} {
		t.Run(where, func(t *testing.T) {
			keys := map[string]string{} // what is read → the key of the "… only" model
			uses := int64(1)
			if where == "subgraph" {
				uses = 2 // the If's two branches are the same graph
			}
			for i, c := range tensors {
				path := write(t, dir, strings.ReplaceAll(where, " ", "_")+string(rune('a'+i))+".onnx", placed(where, c.w()))
				h := hashOf(t, path)
				if h.ExternalBytes != uses*c.external {
					t.Errorf("%s: %d external bytes read, want %d", c.name, h.ExternalBytes, uses*c.external)
				}
				k := key(h)
				want, ok := keys[c.reads]
				if !ok {
					keys[c.reads] = k
					continue
				}
				if k != want {
					t.Errorf("%s: key %s, want %s, the key of the model that holds only the bytes read (%s)", c.name, Short(k), Short(want), c.reads)
				}
			}
			if keys["inline"] == keys["external"] {
				t.Errorf("inline and external data key alike")
			}
		})
	}
}

// TestDataLocationReproducer: two models one byte apart, the data_location byte, with inline
// weights [1,2,3,4] and external ones [100,200,300,400], are different models.
func TestDataLocationReproducer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(100, 200, 300, 400), 0o644); err != nil {
		t.Fatal(err)
	}
	model := func(loc onnxpb.TensorProto_DataLocation) []byte {
		w := tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4})
		w.ExternalData = entries("w.bin", 0, 16)
		// data_location written as a field in both, so the files differ in its value only
		w = withUnknown(w, varintField(onnx.FieldTensorDataLocation, uint64(loc)))
		b, err := tm.Marshal(placed("initializer", w))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	def, ext := model(onnxpb.TensorProto_DEFAULT), model(onnxpb.TensorProto_EXTERNAL)
	if len(def) != len(ext) {
		t.Fatalf("the models differ in length: %d, %d", len(def), len(ext))
	}
	diff := 0
	for i := range def {
		if def[i] != ext[i] {
			diff++
		}
	}
	if diff != 1 {
		t.Fatalf("the models differ in %d bytes, want 1", diff)
	}
	hash := func(name string, b []byte) ModelHashes {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return hashOf(t, p)
	}
	hd, he := hash("default.onnx", def), hash("external.onnx", ext)
	if key(hd) == key(he) {
		t.Fatalf("DEFAULT and EXTERNAL share key %s", key(hd))
	}
	if hd.Graph != he.Graph || hd.Weights == he.Weights {
		t.Errorf("graph same=%v (want true), weights same=%v (want false)", hd.Graph == he.Graph, hd.Weights == he.Weights)
	}
	if hd.ExternalBytes != 0 || he.ExternalBytes != 16 {
		t.Errorf("external bytes read: %d and %d, want 0 and 16", hd.ExternalBytes, he.ExternalBytes)
	}
}

// TestDataLocationErrors: an EXTERNAL tensor needs its data; a DEFAULT one never does.
func TestDataLocationErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		w    *onnxpb.TensorProto
		want string
	}{
		{"EXTERNAL without external_data", &onnxpb.TensorProto{Name: "W", DataType: int32(tm.F32), Dims: []int64{4}, RawData: f32(1, 2, 3, 4), DataLocation: onnxpb.TensorProto_EXTERNAL}, "without a location"},
		{"EXTERNAL with inline data and a missing file", func() *onnxpb.TensorProto {
			w := tm.External("W", []int64{4}, "absent.bin", 0, 16)
			w.RawData = f32(1, 2, 3, 4)
			return w
		}(), "absent.bin"},
		{"EXTERNAL with malformed packed inline data", withUnknown(tm.External("W", []int64{4}, "absent.bin", 0, 16),
			protowire.AppendBytes(protowire.AppendTag(nil, onnx.FieldTensorInt64Data, protowire.BytesType), []byte{0x80})), "malformed"},
		{"DEFAULT with a malformed external_data entry", withUnknown(tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4}),
			protowire.AppendBytes(protowire.AppendTag(nil, onnx.FieldTensorExternalData, protowire.BytesType), []byte{0x0a, 0x05, 'a'})), "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := HashModel(write(t, dir, strings.ReplaceAll(c.name, " ", "_")+".onnx", placed("initializer", c.w)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("HashModel: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestUnusualDataLocation: a data_location no writer produces is kept in the graph hash, and
// the data of every reader's reading is hashed: protobuf decodes the enum as an int32, so
// 1<<32|1 is EXTERNAL to it, while a reader that compares the varint takes the inline data.
func TestUnusualDataLocation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(100, 200, 300, 400), 0o644); err != nil {
		t.Fatal(err)
	}
	hash := func(name string, loc uint64, extern []float32, inline ...float32) ModelHashes {
		if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(extern...), 0o644); err != nil {
			t.Fatal(err)
		}
		w := withUnknown(tm.Floats("W", []int64{4}, inline), varintField(onnx.FieldTensorDataLocation, loc))
		w.ExternalData = entries("w.bin", 0, 16)
		return hashOf(t, write(t, dir, name, placed("initializer", w)))
	}
	ext, in := []float32{100, 200, 300, 400}, []float32{1, 2, 3, 4}
	h := hash("a.onnx", 1<<32|1, ext, in...)
	if h.ExternalBytes != 16 {
		t.Errorf("1<<32|1: %d external bytes read, want 16", h.ExternalBytes)
	}
	for _, c := range []struct {
		name string
		h    ModelHashes
	}{
		{"EXTERNAL", hash("b.onnx", 1, ext, in...)},
		{"DEFAULT", hash("c.onnx", 0, ext, in...)},
		{"another inline value", hash("d.onnx", 1<<32|1, ext, 1, 2, 3, 5)},
		{"another external value", hash("e.onnx", 1<<32|1, []float32{100, 200, 300, 401}, in...)},
	} {
		if key(c.h) == key(h) {
			t.Errorf("data_location 1<<32|1 keys as %s", c.name)
		}
	}
	if h2 := hash("f.onnx", 2, ext, in...); h2.ExternalBytes != 0 || h2.Graph == hash("g.onnx", 0, ext, in...).Graph {
		t.Errorf("data_location 2: %d external bytes read (want 0), or its graph hashes as DEFAULT", h2.ExternalBytes)
	}
}

func field(num protowire.Number, typ protowire.Type, v []byte) []byte {
	b := protowire.AppendTag(nil, num, typ)
	if typ == protowire.BytesType {
		return protowire.AppendBytes(b, v)
	}
	return append(b, v...)
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// TestFraming: every pair here is two different models whose hashed bytes would run together
// if fields, messages or tensors were not framed; each must key apart.
func TestFraming(t *testing.T) {
	bytes := protowire.BytesType
	relu := field(onnx.FieldNodeOpType, bytes, []byte("Relu"))
	tensor := func(fields ...[]byte) []byte {
		return field(onnx.FieldGraphInitializer, bytes, cat(append([][]byte{field(onnx.FieldTensorName, bytes, []byte("w"))}, fields...)...))
	}
	model := func(graph []byte, rest ...[]byte) []byte {
		return cat(append([][]byte{field(onnx.FieldModelGraph, bytes, graph)}, rest...)...)
	}
	cases := []struct {
		name string
		a, b []byte
	}{
		{
			// A node's unknown field 15 of wire type fixed32 has the tag 0x7d, '}': a stream
			// that closes messages with '}' cannot tell it from the node's end.
			"a field that looks like the end of a message",
			model(field(onnx.FieldGraphNode, bytes, cat(relu, field(15, protowire.Fixed32Type, []byte{0x12, 0x02, 'a', 'b'}))),
				field(onnx.FieldModelDomain, bytes, []byte("Q}"))),
			model(cat(field(onnx.FieldGraphNode, bytes, relu), field(onnx.FieldGraphName, bytes, []byte("ab")),
				field(onnx.FieldGraphSparseInitializer, protowire.Fixed32Type, []byte{0x7d, 0x22, 0x02, 'Q'}))),
		},
		{
			"string data split differently",
			model(tensor(field(onnx.FieldTensorStringData, bytes, []byte("ab")), field(onnx.FieldTensorStringData, bytes, []byte("c")))),
			model(tensor(field(onnx.FieldTensorStringData, bytes, []byte("a")), field(onnx.FieldTensorStringData, bytes, []byte("bc")))),
		},
		{
			"raw data of one tensor or of the next",
			model(cat(tensor(field(onnx.FieldTensorRawData, bytes, []byte("abcd"))), tensor())),
			model(cat(tensor(), tensor(field(onnx.FieldTensorRawData, bytes, []byte("abcd"))))),
		},
		{
			"raw data split between two tensors",
			model(cat(tensor(field(onnx.FieldTensorRawData, bytes, []byte("ab"))), tensor(field(onnx.FieldTensorRawData, bytes, []byte("cd"))))),
			model(cat(tensor(field(onnx.FieldTensorRawData, bytes, []byte("abc"))), tensor(field(onnx.FieldTensorRawData, bytes, []byte("d"))))),
		},
		{
			// float_data unpacked (fixed32 0x03 'a' 'b' 'c') against packed ("abc", whose
			// length byte is 0x03): the same bytes after the tag.
			"one float against three packed bytes",
			model(tensor(field(onnx.FieldTensorFloatData, protowire.Fixed32Type, []byte{0x03, 'a', 'b', 'c'}))),
			model(tensor(field(onnx.FieldTensorFloatData, bytes, []byte("abc")))),
		},
		{
			"a data field against another",
			model(tensor(field(onnx.FieldTensorInt32Data, bytes, []byte{1, 2}))),
			model(tensor(field(onnx.FieldTensorInt64Data, bytes, []byte{1, 2}))),
		},
		{
			"an empty node against none",
			model(cat(field(onnx.FieldGraphNode, bytes, relu), field(onnx.FieldGraphNode, bytes, nil))),
			model(field(onnx.FieldGraphNode, bytes, relu)),
		},
		{
			"a node in the graph against one in a subgraph",
			model(cat(field(onnx.FieldGraphNode, bytes, field(onnx.FieldNodeAttribute, bytes, field(onnx.FieldAttrG, bytes, field(onnx.FieldGraphNode, bytes, relu)))), field(onnx.FieldGraphNode, bytes, relu))),
			model(field(onnx.FieldGraphNode, bytes, field(onnx.FieldNodeAttribute, bytes, field(onnx.FieldAttrG, bytes, cat(field(onnx.FieldGraphNode, bytes, relu), field(onnx.FieldGraphNode, bytes, relu)))))),
		},
		{
			"the same bytes as a subgraph or as an unknown field",
			model(field(onnx.FieldGraphNode, bytes, field(onnx.FieldNodeAttribute, bytes, field(onnx.FieldAttrG, bytes, relu)))),
			model(field(onnx.FieldGraphNode, bytes, field(onnx.FieldNodeAttribute, bytes, field(7, bytes, relu)))),
		},
	}
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hashes [2]ModelHashes
			for j, b := range [][]byte{c.a, c.b} {
				p := filepath.Join(dir, string(rune('a'+i))+string(rune('0'+j))+".onnx")
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				hashes[j] = hashOf(t, p)
			}
			if key(hashes[0]) == key(hashes[1]) {
				t.Errorf("the two models share key %s", key(hashes[0]))
			}
		})
	}
}

// TestLocalFunctions: a local function's nodes are walked like the graph's, so its constants
// are weights, and so are its attribute defaults.
func TestLocalFunctions(t *testing.T) {
	dir := t.TempDir()
	for _, where := range []string{"function", "function default"} {
		t.Run(where, func(t *testing.T) {
			base := hashOf(t, write(t, dir, "a.onnx", placed(where, tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4}))))
			changed := hashOf(t, write(t, dir, "b.onnx", placed(where, tm.Floats("W", []int64{4}, []float32{1, 2, 3, 5}))))
			if changed.Graph != base.Graph || changed.Weights == base.Weights {
				t.Errorf("one weight changed: graph same=%v (want true), weights same=%v (want false)", changed.Graph == base.Graph, changed.Weights == base.Weights)
			}
			m := placed(where, tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4}))
			m.Functions[0].Node[1].OpType = "Sub"
			op := hashOf(t, write(t, dir, "c.onnx", m))
			if op.Graph == base.Graph || op.Weights != base.Weights {
				t.Errorf("one operator changed: graph same=%v (want false), weights same=%v (want true)", op.Graph == base.Graph, op.Weights == base.Weights)
			}
		})
	}
}
