package onnx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// shapeString writes a value as name:type[d0,d1...] for compact comparisons.
func shapeString(v Value) string {
	if v.Shape == nil {
		return fmt.Sprintf("%s:%s:%s[?]", v.Name, v.Kind, v.ElemType)
	}
	dims := make([]string, len(v.Shape))
	for i, d := range v.Shape {
		dims[i] = d.String()
	}
	return fmt.Sprintf("%s:%s:%s[%s]", v.Name, v.Kind, v.ElemType, strings.Join(dims, ","))
}

func shapeStrings(vs []Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = shapeString(v)
	}
	return out
}

func TestReadMetadataBundled(t *testing.T) {
	tests := []struct {
		file          string
		opsets        []Opset
		graph         string
		inputs        []string
		outputs       []string
		nodes         int
		subgraphNodes int
		firstNodes    []string
		inits         int
		initBytes     int64
		external      []ExternalRef
		custom        []string
	}{
		{
			file: "convnet.onnx", opsets: []Opset{{"", 17}}, graph: "convnet",
			inputs:     []string{"images:tensor:float32[1,3,224,224]"},
			outputs:    []string{"probs:tensor:float32[1,10]"},
			nodes:      24,
			firstNodes: []string{"stem/conv1", "stem/bn1", "stem/relu1", "stem/pool", "stage1/block1/conv1"},
			inits:      32,
			// conv weights + 4 BN vectors per BN + fc, 4 bytes each.
			initBytes: 4 * (16*3*9 + 16*16*9*2 + 32*16*9 + 32*32*9 + 32*16 + 4*(16*3+32*3) + 10*32 + 10),
		},
		{
			file: "dynamic_batch.onnx", opsets: []Opset{{"", 17}}, graph: "dynamic_batch",
			inputs:     []string{"images:tensor:float32[batch,3,64,64]"},
			outputs:    []string{"logits:tensor:float32[batch,4]"},
			nodes:      5,
			firstNodes: []string{"features/conv", "features/relu"},
			inits:      3, initBytes: 4 * (8*3*9 + 32 + 4),
		},
		{
			file: "two_inputs_dynamic.onnx", opsets: []Opset{{"", 17}}, graph: "two_inputs_dynamic",
			inputs:     []string{"input_ids:tensor:int64[batch,sequence]", "attention_mask:tensor:float32[batch,sequence]"},
			outputs:    []string{"pooled:tensor:float32[batch,4]"},
			nodes:      8,
			firstNodes: []string{"embed/gather", "mask/unsqueeze", "embed/mask"},
			inits:      5, initBytes: 4*(1600+64+4) + 8*2,
		},
		{
			file: "external_data.onnx", opsets: []Opset{{"", 17}}, graph: "external_data",
			inputs:     []string{"x:tensor:float32[1,64]"},
			outputs:    []string{"y:tensor:float32[1,64]"},
			nodes:      3,
			firstNodes: []string{"fc/matmul", "fc/add", "fc/relu"},
			inits:      2, initBytes: 4 * (64*64 + 64),
			external: []ExternalRef{
				{Tensor: "fc.weight", Location: "external_data.bin", Offset: 0, Length: 16384, HasLength: true},
				{Tensor: "fc.bias", Location: "external_data.bin", Offset: 16384, Length: 256, HasLength: true},
			},
		},
		{
			file: "fp16.onnx", opsets: []Opset{{"", 17}}, graph: "fp16",
			inputs:     []string{"images:tensor:float16[1,3,64,64]"},
			outputs:    []string{"features:tensor:float16[1,8,32,32]"},
			nodes:      3,
			firstNodes: []string{"conv", "relu", "pool"},
			inits:      2, initBytes: 2 * (8*3*9 + 8),
		},
		{
			file: "custom_op.onnx", opsets: []Opset{{"", 17}, {"com.example", 1}}, graph: "custom_op",
			inputs:     []string{"x:tensor:float32[1,8]"},
			outputs:    []string{"y:tensor:float32[1,8]"},
			nodes:      2,
			firstNodes: []string{"act/swish", "Relu_1"},
			custom:     []string{"com.example::Swish"},
		},
		{
			file: "control_flow.onnx", opsets: []Opset{{"", 17}}, graph: "control_flow",
			inputs:        []string{"x:tensor:float32[1,8]", "cond:tensor:bool[]"},
			outputs:       []string{"y:tensor:float32[1,?]"},
			nodes:         1,
			subgraphNodes: 4,
			firstNodes:    []string{"select"},
			inits:         2, initBytes: 8,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := testmodels.Bundled(t, tt.file)
			m, err := ReadMetadata(path)
			if err != nil {
				t.Fatal(err)
			}
			if m.IRVersion != 8 || m.ProducerName != testmodels.Producer || m.GraphName != tt.graph {
				t.Errorf("ir %d producer %q graph %q", m.IRVersion, m.ProducerName, m.GraphName)
			}
			if !reflect.DeepEqual(m.Opsets, tt.opsets) {
				t.Errorf("opsets %v, want %v", m.Opsets, tt.opsets)
			}
			if got := shapeStrings(m.Inputs); !reflect.DeepEqual(got, tt.inputs) {
				t.Errorf("inputs %q, want %q", got, tt.inputs)
			}
			if got := shapeStrings(m.Outputs); !reflect.DeepEqual(got, tt.outputs) {
				t.Errorf("outputs %q, want %q", got, tt.outputs)
			}
			if len(m.Nodes) != tt.nodes || len(m.SubgraphNodes) != tt.subgraphNodes {
				t.Errorf("%d nodes and %d in subgraphs, want %d and %d", len(m.Nodes), len(m.SubgraphNodes), tt.nodes, tt.subgraphNodes)
			}
			if got := m.NodeNames()[:len(tt.firstNodes)]; !reflect.DeepEqual(got, tt.firstNodes) {
				t.Errorf("node names start %q, want %q", got, tt.firstNodes)
			}
			if len(m.Initializers) != tt.inits || m.InitializerBytes() != tt.initBytes {
				t.Errorf("%d initializers of %d bytes, want %d of %d", len(m.Initializers), m.InitializerBytes(), tt.inits, tt.initBytes)
			}
			if !reflect.DeepEqual(m.External, tt.external) {
				t.Errorf("external %+v, want %+v", m.External, tt.external)
			}
			var custom []string
			for _, c := range m.CustomOps() {
				custom = append(custom, c.String())
			}
			if !reflect.DeepEqual(custom, tt.custom) {
				t.Errorf("custom ops %q, want %q", custom, tt.custom)
			}
			st, _ := os.Stat(path)
			if m.FileSize != st.Size() {
				t.Errorf("FileSize %d, want %d", m.FileSize, st.Size())
			}
		})
	}
}

func TestReadMetadataMalformed(t *testing.T) {
	tests := []struct {
		file      string
		truncated bool
		want      string
	}{
		{"truncated.onnx", true, "is truncated (the graph (field 7 of the model) at byte 35 claims"},
		{"random_bytes.onnx", false, "is not an ONNX model ("},
		{"wrong_magic.onnx", false, "is not an ONNX model (it is a PNG image)"},
		{"nested_length_bomb.onnx", false, "nested more than 100 messages deep"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := testmodels.Bundled(t, tt.file)
			for name, read := range map[string]func(string) error{
				"ReadMetadata": func(p string) error { _, err := ReadMetadata(p); return err },
				"ReadModel":    func(p string) error { _, err := ReadModel(p); return err },
			} {
				err := read(path)
				if err == nil {
					t.Fatalf("%s accepted %s", name, tt.file)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, path+" ") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
					t.Errorf("%s error = %q, want one line starting with the path and containing %q", name, msg, tt.want)
				}
				if !errors.Is(err, ErrNotONNX) {
					t.Errorf("%s error is not ErrNotONNX: %v", name, err)
				}
				if errors.Is(err, ErrTruncated) != tt.truncated {
					t.Errorf("%s: errors.Is(err, ErrTruncated) = %v, want %v", name, !tt.truncated, tt.truncated)
				}
			}
		})
	}
}

// TestReadMetadataErrors covers damaged files built on the fly: every one
// must give a one-line FormatError, never a panic.
func TestReadMetadataErrors(t *testing.T) {
	valid, err := os.ReadFile(testmodels.Bundled(t, "dynamic_batch.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name      string
		data      []byte
		truncated bool
		want      string
	}{
		{"empty", nil, false, "the file is empty"},
		{"zip", []byte("PK\x03\x04\x14\x00\x00\x00"), false, "ZIP archive"},
		{"git lfs pointer", []byte("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"), false, "git lfs pull"},
		{"text", []byte("hello, this is not a model\n"), false, "it is a text file"},
		{"no graph", cat(tag(1, protowire.VarintType), []byte{8}), false, "it has no graph"},
		{"field number zero", []byte{0x00, 0x01}, false, "invalid field number 0"},
		{"cut inside a varint", cat(tag(1, protowire.VarintType), []byte{0x80}), true, "the file ends inside"},
		{"cut in half", valid[:len(valid)/2], true, "claims"},
		{"cut by one byte", valid[:len(valid)-1], true, ""},
		{"overlong varint", cat(tag(1, protowire.VarintType), bytes.Repeat([]byte{0xff}, 11)), false, "invalid varint"},
		{"end group without start", cat(tag(7, protowire.BytesType), []byte{2}, tag(3, protowire.EndGroupType), []byte{0}), false, "invalid wire type 4"},
		{"inner length beyond its message", cat(tag(7, protowire.BytesType), []byte{3}, tag(1, protowire.BytesType), []byte{10, 0},
			tag(2, protowire.BytesType), []byte{12}, []byte("twelve bytes")), false, "its message has 1 left"},
		{"huge length", cat(tag(7, protowire.BytesType), protowire.AppendVarint(nil, 1<<62)), true, "claims 4611686018427387904 bytes"},
		{"fixed64 cut", cat(tag(1, protowire.VarintType), []byte{8}, tag(9, protowire.Fixed64Type), []byte{1, 2}), true, "the file ends inside field 9"},
		{"unterminated group", cat(tag(1, protowire.VarintType), []byte{8}, tag(99, protowire.StartGroupType)), false, "group 99 of the model has no end"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".onnx")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadMetadata(path)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if fe.Truncated != tt.truncated || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q (truncated %v), want truncated %v and %q", err, fe.Truncated, tt.truncated, tt.want)
			}
		})
	}
}

func TestReadMetadataNotAFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadMetadata(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	_, err := ReadMetadata(filepath.Join(dir, "missing.onnx"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestNestedLengthBombIsCheap checks that the bomb fails fast and without a large
// allocation, by the work done rather than the time taken: the file is read at most once,
// in a handful of reads and seeks (a reader that went back to the file for each of the
// thousand nesting levels would make hundreds), and little is allocated.
func TestNestedLengthBombIsCheap(t *testing.T) {
	path := testmodels.Bundled(t, "nested_length_bomb.onnx")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	cf := &countingFile{File: f}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = decode(cf, st.Size(), path)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrNotONNX) || !strings.Contains(err.Error(), "nested more than 100 messages deep") {
		t.Fatalf("the bomb: %v, want it refused as nested too deep", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading the bomb allocated %d bytes", alloc)
	}
	if cf.n > st.Size() || cf.reads > 10 || cf.seeks > 10 {
		t.Errorf("reading the bomb read %d bytes of %d in %d reads and %d seeks; want the file read at most once, in a handful of each", cf.n, st.Size(), cf.reads, cf.seeks)
	}
}

// countingFile counts the bytes read through it, and the reads and seeks.
type countingFile struct {
	*os.File
	n            int64
	reads, seeks int
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.File.Read(p)
	c.n += int64(n)
	c.reads++
	return n, err
}

func (c *countingFile) Seek(offset int64, whence int) (int64, error) {
	c.seeks++
	return c.File.Seek(offset, whence)
}

// TestPayloadsAreSkipped writes a model with 24 MiB of weights and checks
// that reading its metadata reads only a tiny part of the file.
func TestPayloadsAreSkipped(t *testing.T) {
	g := &onnxpb.GraphProto{Name: "big"}
	var want int64
	for i := 0; i < 6; i++ {
		n := (1 << 20) + i // 4 MiB and a bit, so payloads straddle buffer boundaries
		name := fmt.Sprintf("w%d", i)
		g.Initializer = append(g.Initializer, testmodels.Floats(name, []int64{int64(n)}, make([]float32, n)))
		g.Node = append(g.Node, testmodels.Node("id"+name, "Identity", []string{name}, []string{"o" + name}))
		g.Output = append(g.Output, testmodels.Value("o"+name, testmodels.F32, n))
		want += 4 * int64(n)
	}
	data, err := testmodels.Marshal(testmodels.Model(g))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cf := &countingFile{File: f}
	m, err := decode(cf, int64(len(data)), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Initializers) != 6 || m.InitializerBytes() != want || len(m.Nodes) != 6 {
		t.Fatalf("got %d initializers of %d bytes, %d nodes", len(m.Initializers), m.InitializerBytes(), len(m.Nodes))
	}
	// Each hop to the next tensor header reads one small chunk.
	if cf.n > 64<<10 {
		t.Fatalf("read %d of %d bytes; payloads were not skipped", cf.n, len(data))
	}
}

// TestAgreesWithFullReader compares ReadMetadata with proto.Unmarshal (via
// ReadModel) on every valid bundled model and every shared model.
func TestAgreesWithFullReader(t *testing.T) {
	var paths []string
	for _, name := range []string{"convnet.onnx", "dynamic_batch.onnx", "two_inputs_dynamic.onnx",
		"external_data.onnx", "fp16.onnx", "custom_op.onnx", "control_flow.onnx"} {
		paths = append(paths, testmodels.Bundled(t, name))
	}
	t.Run("bundled", func(t *testing.T) {
		for _, p := range paths {
			compareWithFull(t, p)
		}
	})
	t.Run("shared", func(t *testing.T) {
		for _, p := range testmodels.Shared(t) {
			compareWithFull(t, p)
		}
	})
}

func compareWithFull(t *testing.T, path string) {
	t.Helper()
	m, err := ReadMetadata(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	full, err := ReadModel(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want := summarize(full)
	got := summarizeMeta(m)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ReadMetadata gives\n%+v\nproto.Unmarshal gives\n%+v", filepath.Base(path), got, want)
	}
}

// summary is what both readers must agree on.
type summary struct {
	IR                int64
	Producer, Graph   string
	Opsets            []string
	Nodes             []string
	Inputs, Outputs   []string
	Initializers      []string
	InitializerBytes  int64
	ExternalLocations []string
}

func summarizeMeta(m *Model) summary {
	s := summary{IR: m.IRVersion, Producer: m.ProducerName, Graph: m.GraphName, InitializerBytes: m.InitializerBytes()}
	for _, o := range m.Opsets {
		s.Opsets = append(s.Opsets, fmt.Sprintf("%s:%d", o.Domain, o.Version))
	}
	for _, n := range m.Nodes {
		s.Nodes = append(s.Nodes, n.Domain+"::"+n.OpType+"::"+n.Name)
	}
	s.Inputs = shapeStrings(m.Inputs)
	s.Outputs = shapeStrings(m.Outputs)
	for _, in := range m.Initializers {
		s.Initializers = append(s.Initializers, fmt.Sprintf("%s:%s%v", in.Name, in.DataType, in.Dims))
	}
	for _, e := range m.External {
		s.ExternalLocations = append(s.ExternalLocations, e.Location)
	}
	return s
}

func summarize(p *onnxpb.ModelProto) summary {
	s := summary{IR: p.GetIrVersion(), Producer: p.GetProducerName(), Graph: p.GetGraph().GetName()}
	for _, o := range p.GetOpsetImport() {
		s.Opsets = append(s.Opsets, fmt.Sprintf("%s:%d", o.GetDomain(), o.GetVersion()))
	}
	for _, n := range p.GetGraph().GetNode() {
		s.Nodes = append(s.Nodes, n.GetDomain()+"::"+n.GetOpType()+"::"+n.GetName())
	}
	inits := map[string]bool{}
	var addInits func(g *onnxpb.GraphProto)
	addTensor := func(t *onnxpb.TensorProto) {
		s.Initializers = append(s.Initializers, fmt.Sprintf("%s:%s%v", t.GetName(), DataType(t.GetDataType()), t.GetDims()))
		s.InitializerBytes += int64(len(t.GetRawData())) + 4*int64(len(t.GetFloatData())) + 8*int64(len(t.GetInt64Data()))
		if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
			for _, kv := range t.GetExternalData() {
				if kv.GetKey() == "location" {
					s.ExternalLocations = append(s.ExternalLocations, kv.GetValue())
				}
				if kv.GetKey() == "length" {
					var n int64
					fmt.Sscan(kv.GetValue(), &n)
					s.InitializerBytes += n
				}
			}
		}
	}
	// Initializers are listed graph by graph in file order: the main graph's
	// nodes (with their subgraphs) come before its initializers when fields
	// are written in field-number order, as every protobuf encoder does.
	addInits = func(g *onnxpb.GraphProto) {
		for _, n := range g.GetNode() {
			for _, a := range n.GetAttribute() {
				if a.GetG() != nil {
					addInits(a.GetG())
				}
				for _, sub := range a.GetGraphs() {
					addInits(sub)
				}
			}
		}
		for _, t := range g.GetInitializer() {
			addTensor(t)
		}
	}
	addInits(p.GetGraph())
	for _, t := range p.GetGraph().GetInitializer() {
		inits[t.GetName()] = true
	}
	value := func(v *onnxpb.ValueInfoProto) string {
		tt := v.GetType().GetTensorType()
		if tt.GetShape() == nil {
			return fmt.Sprintf("%s:tensor:%s[?]", v.GetName(), DataType(tt.GetElemType()))
		}
		var dims []string
		for _, d := range tt.GetShape().GetDim() {
			switch {
			case d.GetDimParam() != "":
				dims = append(dims, d.GetDimParam())
			case d.GetValue() == nil:
				dims = append(dims, "?")
			default:
				dims = append(dims, fmt.Sprint(d.GetDimValue()))
			}
		}
		return fmt.Sprintf("%s:tensor:%s[%s]", v.GetName(), DataType(tt.GetElemType()), strings.Join(dims, ","))
	}
	for _, v := range p.GetGraph().GetInput() {
		if !inits[v.GetName()] {
			s.Inputs = append(s.Inputs, value(v))
		}
	}
	for _, v := range p.GetGraph().GetOutput() {
		s.Outputs = append(s.Outputs, value(v))
	}
	return s
}

func TestDims(t *testing.T) {
	// A shape with a fixed size, a named dimension, an unknown one, a -1
	// written by some exporters, and a dim given twice (the last wins).
	dimFixed := protowire.AppendTag(nil, FieldDimValue, protowire.VarintType)
	dimFixed = protowire.AppendVarint(dimFixed, 3)
	dimNamed := protowire.AppendTag(nil, FieldDimParam, protowire.BytesType)
	dimNamed = protowire.AppendString(dimNamed, "batch")
	dimMinus := protowire.AppendTag(nil, FieldDimValue, protowire.VarintType)
	dimMinus = protowire.AppendVarint(dimMinus, ^uint64(0)) // -1 as int64
	twice := append(append([]byte{}, dimNamed...), dimFixed...)
	var shape []byte
	for _, d := range [][]byte{dimFixed, dimNamed, nil, dimMinus, twice} {
		shape = protowire.AppendTag(shape, FieldShapeDim, protowire.BytesType)
		shape = protowire.AppendBytes(shape, d)
	}
	tensorType := protowire.AppendTag(nil, FieldTypeTensorElemType, protowire.VarintType)
	tensorType = protowire.AppendVarint(tensorType, uint64(Float))
	tensorType = protowire.AppendTag(tensorType, FieldTypeTensorShape, protowire.BytesType)
	tensorType = protowire.AppendBytes(tensorType, shape)
	typ := protowire.AppendTag(nil, FieldTypeTensor, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tensorType)
	value := protowire.AppendTag(nil, FieldValueName, protowire.BytesType)
	value = protowire.AppendString(value, "x")
	value = protowire.AppendTag(value, FieldValueType, protowire.BytesType)
	value = protowire.AppendBytes(value, typ)
	// A second input with no shape at all (unknown rank).
	noShape := protowire.AppendTag(nil, FieldValueName, protowire.BytesType)
	noShape = protowire.AppendString(noShape, "y")
	graph := protowire.AppendTag(nil, FieldGraphInput, protowire.BytesType)
	graph = protowire.AppendBytes(graph, value)
	graph = protowire.AppendTag(graph, FieldGraphInput, protowire.BytesType)
	graph = protowire.AppendBytes(graph, noShape)
	model := protowire.AppendTag(nil, FieldModelGraph, protowire.BytesType)
	model = protowire.AppendBytes(model, graph)

	m, err := decode(bytes.NewReader(model), int64(len(model)), "dims.onnx")
	if err != nil {
		t.Fatal(err)
	}
	got := shapeStrings(m.Inputs)
	want := []string{"x:tensor:float32[3,batch,?,?,3]", "y::undefined[?]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("inputs %q, want %q", got, want)
	}
	if !m.Inputs[0].IsDynamic() || !m.Inputs[1].IsDynamic() {
		t.Fatal("inputs with unknown dims are not dynamic")
	}
	if m.Inputs[0].Shape[3].Known {
		t.Fatal("dim_value -1 is taken as a size")
	}
}

func TestNodeNamesFallback(t *testing.T) {
	m := &Model{Nodes: []Node{{Name: "a", OpType: "Conv"}, {OpType: "Relu"}, {Name: "c", OpType: "Add"}, {OpType: "Relu"}}}
	got := m.NodeNames()
	want := []string{"a", "Relu_1", "c", "Relu_3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NodeNames = %q, want %q", got, want)
	}
}

func TestOpHistogramAndCustomOps(t *testing.T) {
	m := &Model{
		Nodes: []Node{
			{OpType: "Conv"}, {OpType: "Relu"}, {OpType: "Conv", Domain: "ai.onnx"}, {OpType: "Relu"},
			{OpType: "Relu"}, {OpType: "Add"}, {OpType: "Swish", Domain: "com.example"},
			{OpType: "Gelu", Domain: "local"},
		},
		SubgraphNodes: []Node{{OpType: "Attention", Domain: "com.microsoft"}},
		Functions: []Function{{Domain: "local", Name: "Gelu", Nodes: []Node{
			{OpType: "Erf"}, {OpType: "FastGelu", Domain: "com.microsoft"},
		}}},
	}
	var hist []string
	for _, c := range m.OpHistogram() {
		hist = append(hist, fmt.Sprintf("%s=%d", c, c.Count))
	}
	wantHist := []string{"Relu=3", "Conv=2", "Add=1", "com.example::Swish=1", "local::Gelu=1"}
	if !reflect.DeepEqual(hist, wantHist) {
		t.Errorf("OpHistogram = %q, want %q", hist, wantHist)
	}
	var custom []string
	for _, c := range m.CustomOps() {
		custom = append(custom, c.String())
	}
	wantCustom := []string{"com.example::Swish", "com.microsoft::Attention", "com.microsoft::FastGelu"}
	if !reflect.DeepEqual(custom, wantCustom) {
		t.Errorf("CustomOps = %q, want %q", custom, wantCustom)
	}
	m.Opsets = []Opset{{"ai.onnx", 13}, {"com.example", 1}}
	if m.Opset("") != 13 || m.Opset("com.example") != 1 || m.Opset("x") != 0 {
		t.Errorf("Opset lookups wrong: %d %d %d", m.Opset(""), m.Opset("com.example"), m.Opset("x"))
	}
}

func TestTensorSize(t *testing.T) {
	tests := []struct {
		t    Tensor
		want int64
		ok   bool
	}{
		{Tensor{DataType: Float, Dims: []int64{2, 3}}, 24, true},
		{Tensor{DataType: Float, Dims: nil}, 4, true},
		{Tensor{DataType: Float, Dims: []int64{0, 5}}, 0, true},
		{Tensor{DataType: Int4, Dims: []int64{3}}, 2, true},
		{Tensor{DataType: Uint2, Dims: []int64{5}}, 2, true},
		{Tensor{DataType: Complex128, Dims: []int64{2}}, 32, true},
		{Tensor{DataType: String, Dims: []int64{2}}, 0, false},
		{Tensor{DataType: DataType(99), Dims: []int64{2}}, 0, false},
		{Tensor{DataType: Float, Dims: []int64{-1}}, 0, false},
		{Tensor{DataType: Double, Dims: []int64{1 << 40, 1 << 40}}, 0, false},
	}
	for _, tt := range tests {
		got, ok := tt.t.size()
		if got != tt.want || ok != tt.ok {
			t.Errorf("size(%s%v) = %d, %v; want %d, %v", tt.t.DataType, tt.t.Dims, got, ok, tt.want, tt.ok)
		}
	}
}
