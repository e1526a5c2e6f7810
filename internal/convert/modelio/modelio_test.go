package modelio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

func floats(n int, scale float32) []byte {
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i)*scale))
	}
	return b
}

// unknown appends an unknown varint field to m.
func unknown(m proto.Message, num protowire.Number, v uint64) {
	r := m.ProtoReflect()
	b := protowire.AppendTag(r.GetUnknown(), num, protowire.VarintType)
	r.SetUnknown(protowire.AppendVarint(b, v))
}

func testModel() *onnxpb.ModelProto {
	big := &onnxpb.TensorProto{Name: "W", Dims: []int64{64, 64}, DataType: int32(onnxpb.TensorProto_FLOAT), RawData: floats(64*64, 0.5)}
	small := &onnxpb.TensorProto{Name: "b", Dims: []int64{4}, DataType: int32(onnxpb.TensorProto_FLOAT), RawData: floats(4, 1)}
	shape := &onnxpb.TensorProto{Name: "shape", Dims: []int64{2}, DataType: int32(onnxpb.TensorProto_INT64), Int64Data: []int64{1, -1}}
	unknown(big, 999, 7)
	node := &onnxpb.NodeProto{Name: "mm", OpType: "MatMul", Input: []string{"x", "W"}, Output: []string{"y"}}
	unknown(node, 998, 1)
	g := &onnxpb.GraphProto{Name: "g", Node: []*onnxpb.NodeProto{node}, Initializer: []*onnxpb.TensorProto{big, small, shape}}
	unknown(g, 997, 2)
	m := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}}, Graph: g, ProducerName: "test"}
	unknown(m, 996, 3)
	return m
}

func writeProto(t *testing.T, path string, m proto.Message) {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readProto(t *testing.T, path string) *onnxpb.ModelProto {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func dataOf(t *testing.T, m *Model, tp *Tensor) []byte {
	t.Helper()
	var out []byte
	if err := m.ReadData(tp, func(c []byte) error { out = append(out, c...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLoadWriteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	orig := testModel()
	in := filepath.Join(dir, "in.onnx")
	writeProto(t, in, orig)
	m, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	inits := m.Graph.Inits
	if !inits[0].InFile() || inits[1].InFile() || inits[2].InFile() {
		t.Fatalf("InFile = %v %v %v, want only the 16 KiB tensor left in the file", inits[0].InFile(), inits[1].InFile(), inits[2].InFile())
	}
	if inits[0].data.n != 0 || len(m.buf) > 4<<10 {
		t.Fatalf("the lazily read tensor's data is in memory (%d bytes read)", len(m.buf))
	}
	if got := dataOf(t, m, &inits[0]); !bytes.Equal(got, orig.Graph.Initializer[0].RawData) {
		t.Fatal("ReadData returned different bytes")
	}
	if n, _ := m.DataSize(&inits[0]); n != 64*64*4 {
		t.Fatalf("DataSize = %d", n)
	}
	inline, err := m.InlineSize()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.onnx")
	w, err := m.Write(out, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.DataPath != "" || w.ModelSize != inline {
		t.Fatalf("Write = %+v, want no data file and %d bytes", w, inline)
	}
	got := readProto(t, out)
	if !proto.Equal(got, orig) {
		t.Fatalf("round trip changed the model (unknown fields included):\n got %v\nwant %v", got, orig)
	}
	if len(got.ProtoReflect().GetUnknown()) == 0 || len(got.Graph.Initializer[0].ProtoReflect().GetUnknown()) == 0 ||
		len(got.Graph.Node[0].ProtoReflect().GetUnknown()) == 0 || len(got.Graph.ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("unknown fields were dropped")
	}
}

func TestFloatDataIsStreamed(t *testing.T) {
	dir := t.TempDir()
	vals := make([]float32, 2000)
	for i := range vals {
		vals[i] = float32(i) - 1000.5
	}
	orig := testModel()
	orig.Graph.Initializer[0] = &onnxpb.TensorProto{Name: "W", Dims: []int64{2000}, DataType: int32(onnxpb.TensorProto_FLOAT), FloatData: vals}
	in := filepath.Join(dir, "in.onnx")
	writeProto(t, in, orig)
	m, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	w0 := &m.Graph.Inits[0]
	if !w0.InFile() {
		t.Fatal("packed float_data of 8000 bytes was not left in the file")
	}
	mem, err := FromProto(orig)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dataOf(t, m, w0), dataOf(t, mem, &mem.Graph.Inits[0])) {
		t.Fatal("float_data read from the file differs from its in-memory encoding")
	}
	out := filepath.Join(dir, "out.onnx")
	if _, err := m.Write(out, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := readProto(t, out).Graph.Initializer[0]
	if len(got.FloatData) != 0 || !bytes.Equal(got.RawData, dataOf(t, mem, &mem.Graph.Inits[0])) {
		t.Fatal("float_data was not written back as the same values in raw_data")
	}
}

// halfLowering writes each 4-byte value as its upper 2 bytes: a stand-in
// for the float16 conversion, whose kernels are not this package's.
var halfLowering = Lowering{DataType: int32(onnxpb.TensorProto_FLOAT16), Convert: func(dst, src []byte) {
	for i := 0; i < len(src)/4; i++ {
		dst[2*i], dst[2*i+1] = src[4*i+2], src[4*i+3]
	}
}}

func halved(b []byte) []byte {
	out := make([]byte, len(b)/2)
	halfLowering.Convert(out, b)
	return out
}

func TestExternalDataRoundTrip(t *testing.T) {
	dir := t.TempDir()
	orig := testModel()
	m, err := FromProto(proto.Clone(orig).(*onnxpb.ModelProto))
	if err != nil {
		t.Fatal(err)
	}
	// Lower the big tensor, to check that lowered data goes to the data file.
	m.SetLowering(halfLowering)
	m.Graph.Inits[0].Lower = true
	want := halved(orig.Graph.Initializer[0].RawData)
	out := filepath.Join(dir, "ext.onnx")
	w, err := m.Write(out, WriteOptions{External: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.DataPath != out+".data" {
		t.Fatalf("data file %q, want %q", w.DataPath, out+".data")
	}
	raw := readProto(t, out)
	if raw.Graph.Initializer[0].DataLocation != onnxpb.TensorProto_EXTERNAL || raw.Graph.Initializer[2].DataLocation != onnxpb.TensorProto_DEFAULT {
		t.Fatalf("data locations %v %v %v, want only tensors of 1 KiB or more external",
			raw.Graph.Initializer[0].DataLocation, raw.Graph.Initializer[1].DataLocation, raw.Graph.Initializer[2].DataLocation)
	}
	if dt := raw.Graph.Initializer[0].DataType; dt != int32(onnxpb.TensorProto_FLOAT16) {
		t.Fatalf("lowered tensor written as type %d", dt)
	}
	back, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !back.External || !back.Graph.Inits[0].InFile() {
		t.Fatal("external data was not recognized on reload")
	}
	if !bytes.Equal(dataOf(t, back, &back.Graph.Inits[0]), want) {
		t.Fatal("external data differs from the lowered data")
	}
	// Written again without External, the data comes back inline.
	in2 := filepath.Join(dir, "inline.onnx")
	if _, err := back.Write(in2, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readProto(t, in2).Graph.Initializer[0]; !bytes.Equal(got.RawData, want) || got.DataLocation != onnxpb.TensorProto_DEFAULT || len(got.ExternalData) != 0 {
		t.Fatal("external data was not brought back inline")
	}
}

// TestDataSizeMismatch checks that a tensor whose data in the file is not
// what Load saw (the file shrank) fails Write and leaves no file.
func TestDataSizeMismatch(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.onnx")
	writeProto(t, in, testModel())
	m, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(in, m.FileSize-200); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.onnx")
	if _, err := m.Write(out, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("Write = %v, want a read error", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a failed Write left a file behind")
	}
}

func TestSafeJoin(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.bin"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		loc     string
		wantErr string
	}{
		{"ok.bin", ""},
		{"sub/missing.bin", ""},
		{"", "no location"},
		{"../x.bin", "leaves the model's folder"},
		{"a/../../x.bin", "leaves the model's folder"},
		{`..\x.bin`, "leaves the model's folder"},
		{"/etc/passwd", "is absolute"},
		{"link.bin", "leads out of the model's folder"},
	}
	for _, tt := range tests {
		_, err := SafeJoin(dir, tt.loc)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("SafeJoin(%q) = %v", tt.loc, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("SafeJoin(%q) = %v, want %q", tt.loc, err, tt.wantErr)
		}
	}
}

func externalModel(loc, offset, length string) *onnxpb.ModelProto {
	m := testModel()
	t := m.Graph.Initializer[0]
	t.RawData = nil
	t.DataLocation = onnxpb.TensorProto_EXTERNAL
	t.ExternalData = []*onnxpb.StringStringEntryProto{{Key: "location", Value: loc}}
	if offset != "" {
		t.ExternalData = append(t.ExternalData, &onnxpb.StringStringEntryProto{Key: "offset", Value: offset})
	}
	if length != "" {
		t.ExternalData = append(t.ExternalData, &onnxpb.StringStringEntryProto{Key: "length", Value: length})
	}
	return m
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	good, _ := proto.Marshal(testModel())
	tests := []struct {
		name    string
		data    []byte
		model   *onnxpb.ModelProto
		wantErr string
	}{
		{name: "truncated", data: good[:len(good)-100], wantErr: "is truncated (the graph (field 7 of the model) at byte 9 claims"},
		{name: "garbage", data: []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), wantErr: "is not an ONNX model (invalid varint in a field tag of the model at byte 0)"},
		{name: "text", data: []byte("hello, world\n"), wantErr: "is not an ONNX model (it is a text file)"},
		{name: "empty", data: []byte{}, wantErr: "is not an ONNX model (the file is empty)"},
		{name: "no graph", data: protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 8), wantErr: "it has no graph"},
		{name: "escape", model: externalModel("../w.bin", "", ""), wantErr: "leaves the model's folder"},
		{name: "missing", model: externalModel("nope.bin", "", ""), wantErr: "does not exist"},
		{name: "absolute", model: externalModel(filepath.Join(dir, "w.bin"), "", ""), wantErr: "is absolute"},
		{name: "folder", model: externalModel(".", "", ""), wantErr: "is not a regular file (it is a folder)"},
		{name: "short", model: externalModel("w.bin", "50", "100"), wantErr: "is 100 bytes, but the tensor needs bytes 50 to 150"},
		{name: "bad offset", model: externalModel("w.bin", "x", ""), wantErr: "is not a byte count"},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name+".onnx")
		if tt.model != nil {
			writeProto(t, path, tt.model)
		} else if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: Load = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Load(folder) = %v", err)
	}
}

func TestExternalDataOfSubgraphTensorsIsReadIntoMemory(t *testing.T) {
	dir := t.TempDir()
	payload := floats(300, 2)
	if err := os.WriteFile(filepath.Join(dir, "c.bin"), payload, 0o644); err != nil {
		t.Fatal(err)
	}
	m := testModel()
	c := &onnxpb.TensorProto{Name: "c", Dims: []int64{300}, DataType: int32(onnxpb.TensorProto_FLOAT), DataLocation: onnxpb.TensorProto_EXTERNAL,
		ExternalData: []*onnxpb.StringStringEntryProto{{Key: "location", Value: "c.bin"}}}
	m.Graph.Node = append(m.Graph.Node, &onnxpb.NodeProto{OpType: "Constant", Output: []string{"c"},
		Attribute: []*onnxpb.AttributeProto{{Name: "value", Type: onnxpb.AttributeProto_TENSOR, T: c}}})
	path := filepath.Join(dir, "m.onnx")
	writeProto(t, path, m)
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	np, err := got.Graph.NodeProto(1)
	if err != nil {
		t.Fatal(err)
	}
	ct := np.Attribute[0].T
	if !bytes.Equal(ct.RawData, payload) || ct.DataLocation != onnxpb.TensorProto_DEFAULT || !got.External {
		t.Fatal("the Constant's external data was not read into memory")
	}
}

func FuzzLoad(f *testing.F) {
	good, _ := proto.Marshal(testModel())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.onnx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			return
		}
		// Whatever loads must encode to a model that decodes.
		var buf bytes.Buffer
		if _, err := m.Encode(&buf); err != nil {
			return
		}
		if err := proto.Unmarshal(buf.Bytes(), &onnxpb.ModelProto{}); err != nil {
			t.Fatalf("encoded model does not decode: %v", err)
		}
	})
}

// TestLoadKeepsUnknownFieldsOfEveryWireType checks that fields this program
// does not know survive Load and Encode whatever their wire type, at the
// levels Load takes apart itself (model, graph, initializer), and that a
// protobuf group, which ONNX never uses, is refused with a one-line error.
func TestLoadKeepsUnknownFieldsOfEveryWireType(t *testing.T) {
	unknown := func() []byte {
		b := protowire.AppendVarint(protowire.AppendTag(nil, 900, protowire.VarintType), 1<<40)
		b = protowire.AppendFixed32(protowire.AppendTag(b, 901, protowire.Fixed32Type), 0xdeadbeef)
		b = protowire.AppendFixed64(protowire.AppendTag(b, 902, protowire.Fixed64Type), 0x0123456789abcdef)
		return protowire.AppendString(protowire.AppendTag(b, 903, protowire.BytesType), "future")
	}
	m := testModel()
	for _, msg := range []proto.Message{m, m.Graph, m.Graph.Initializer[0], m.Graph.Initializer[1]} {
		msg.ProtoReflect().SetUnknown(unknown())
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "u.onnx")
	writeProto(t, path, m)
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := got.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	var back onnxpb.ModelProto
	if err := proto.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for what, msg := range map[string]proto.Message{"model": &back, "graph": back.Graph,
		"large initializer": back.Graph.Initializer[0], "small initializer": back.Graph.Initializer[1]} {
		if u := msg.ProtoReflect().GetUnknown(); !bytes.Equal(u, unknown()) {
			t.Errorf("%s: unknown fields %x, want %x", what, u, unknown())
		}
	}
	if !proto.Equal(&back, m) {
		t.Error("the model changed on the way through Load and Encode")
	}

	// A group in the model.
	b, _ := proto.Marshal(testModel())
	b = protowire.AppendTag(b, 904, protowire.StartGroupType)
	b = protowire.AppendTag(b, 904, protowire.EndGroupType)
	path = filepath.Join(dir, "g.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	if err == nil || !strings.Contains(err.Error(), "field 904 has wire type 3, which no ONNX message uses") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Load(model with a group) = %v", err)
	}
}

// TestLoadRefusesWhatProtobufRefuses checks that damage inside the parts
// Load does not decode (a node's attributes, an initializer's typed data)
// is found when the model is read, as decoding it whole would: the compact
// form copies those bytes to the output, which must decode.
func TestLoadRefusesWhatProtobufRefuses(t *testing.T) {
	attr := func(num protowire.Number, payload []byte) []byte {
		a := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "a")
		a = protowire.AppendBytes(protowire.AppendTag(a, num, protowire.BytesType), payload)
		return protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), a)
	}
	tensorField := func(num protowire.Number, payload []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), payload)
	}
	tests := []struct {
		name   string
		damage func(m *onnxpb.ModelProto)
	}{
		{"truncated ints attribute", func(m *onnxpb.ModelProto) {
			m.Graph.Node[0].ProtoReflect().SetUnknown(attr(8, []byte{0x80}))
		}},
		{"floats attribute of 5 bytes", func(m *onnxpb.ModelProto) {
			m.Graph.Node[0].ProtoReflect().SetUnknown(attr(7, []byte{1, 2, 3, 4, 5}))
		}},
		{"attribute name not UTF-8", func(m *onnxpb.ModelProto) {
			a := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{0xff})
			m.Graph.Node[0].ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), a))
		}},
		{"truncated int64_data", func(m *onnxpb.ModelProto) {
			m.Graph.Initializer[2].ProtoReflect().SetUnknown(tensorField(7, []byte{0x80}))
		}},
		{"double_data of 7 bytes", func(m *onnxpb.ModelProto) {
			m.Graph.Initializer[1].ProtoReflect().SetUnknown(tensorField(10, make([]byte, 7)))
		}},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel()
			tt.damage(m)
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if proto.Unmarshal(b, &onnxpb.ModelProto{}) == nil {
				t.Fatal("the damaged model decodes: the test damages nothing")
			}
			path := filepath.Join(dir, "m.onnx")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "cannot be decoded") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Load = %v, want a one-line error that the graph cannot be decoded", err)
			}
		})
	}
}
