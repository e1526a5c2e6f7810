package onnx

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestFieldNumbers checks every constant of the field table (fieldnum.go) against the
// generated descriptors: the comment of each names its message and field, and the number
// must be that field's.
func TestFieldNumbers(t *testing.T) {
	_ = onnxpb.File_onnx_proto // the descriptors are registered when onnxpb is loaded
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "fieldnum.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			name := vs.Names[0].Name
			if !strings.HasPrefix(name, "Field") {
				continue
			}
			if vs.Comment == nil || len(vs.Values) != 1 {
				t.Errorf("%s: no comment naming its field, or no value", name)
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok {
				t.Errorf("%s: its value is not a number", name)
				continue
			}
			num, _ := strconv.Atoi(lit.Value)
			full := strings.Fields(vs.Comment.Text())[0] // "TypeProto.Tensor.elem_type"
			msg, field := full[:strings.LastIndex(full, ".")], full[strings.LastIndex(full, ".")+1:]
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("onnx." + msg))
			if err != nil {
				t.Errorf("%s: message %s: %v", name, msg, err)
				continue
			}
			fd := d.(protoreflect.MessageDescriptor).Fields().ByName(protoreflect.Name(field))
			if fd == nil {
				t.Errorf("%s: %s has no field %s", name, msg, field)
				continue
			}
			if int(fd.Number()) != num {
				t.Errorf("%s = %d, but %s is field %d", name, num, full, fd.Number())
			}
			checked++
		}
	}
	if checked < 80 {
		t.Errorf("only %d field numbers checked", checked)
	}
	if DataLocationDefault != int(onnxpb.TensorProto_DEFAULT) || DataLocationExternal != int(onnxpb.TensorProto_EXTERNAL) {
		t.Errorf("data locations %d and %d", DataLocationDefault, DataLocationExternal)
	}
}

func wireTag(num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(nil, num, typ)
}

func catBytes(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestFields: Fields meets every field with its value, its payload and its offsets, stops when
// told, and refuses what the Walker refuses, and groups.
func TestFields(t *testing.T) {
	msg := catBytes(
		protowire.AppendVarint(wireTag(1, protowire.VarintType), 300),
		protowire.AppendFixed32(wireTag(2, protowire.Fixed32Type), 0xdeadbeef),
		protowire.AppendFixed64(wireTag(3, protowire.Fixed64Type), 1<<60),
		protowire.AppendString(wireTag(4, protowire.BytesType), "abc"),
		protowire.AppendString(wireTag(protowire.MaxValidNumber, protowire.BytesType), ""),
	)
	var got []WireField
	if err := Fields(msg, func(f WireField) bool { got = append(got, f); return true }); err != nil {
		t.Fatal(err)
	}
	want := []WireField{
		{Num: 1, Type: protowire.VarintType, Value: 300, Tag: 0, Start: 1, End: 3},
		{Num: 2, Type: protowire.Fixed32Type, Value: 0xdeadbeef, Tag: 3, Start: 4, End: 8},
		{Num: 3, Type: protowire.Fixed64Type, Value: 1 << 60, Tag: 8, Start: 9, End: 17},
		{Num: 4, Type: protowire.BytesType, Payload: []byte("abc"), Tag: 17, Start: 19, End: 22},
		{Num: protowire.MaxValidNumber, Type: protowire.BytesType, Payload: []byte{}, Tag: 22, Start: len(msg), End: len(msg)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, want)
	}
	// Each field's bytes are b[Tag:End], and they are the whole message.
	var joined []byte
	for _, f := range got {
		joined = append(joined, msg[f.Tag:f.End]...)
	}
	if !bytes.Equal(joined, msg) {
		t.Errorf("the fields' bytes are not the message")
	}

	n := 0
	if err := Fields(msg, func(WireField) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("stopped after %d fields, err %v; want 2, nil", n, err)
	}

	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"field number 0", []byte{0x02, 0x00}, "invalid field number 0"},
		{"field number too large", protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), "invalid field number 536870912"},
		{"truncated varint", []byte{0x08, 0x80}, "ends inside field 1"},
		{"long varint", append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 10)...), "invalid varint"},
		{"length past the end", []byte{0x0a, 0x05, 'a'}, "claims 5 bytes"},
		{"short fixed32", []byte{0x15, 1, 2}, "field 2"},
		{"a group", catBytes(wireTag(3, protowire.StartGroupType), wireTag(3, protowire.EndGroupType)), "field 3 has wire type 3, which no ONNX message uses"},
		{"end group alone", wireTag(3, protowire.EndGroupType), "field 3 has wire type 4, which no ONNX message uses"},
		{"wire type 6", []byte{0x0e}, "field 1 has wire type 6"},
	} {
		err := Fields(c.b, func(WireField) bool { return true })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestWalkerGroups: the Walker skips a group, checking its fields by the rules of a message's
// and its nesting against MaxDepth.
func TestWalkerGroups(t *testing.T) {
	group := func(depth int) []byte {
		return catBytes(bytes.Repeat(wireTag(3, protowire.StartGroupType), depth), protowire.AppendVarint(wireTag(1, protowire.VarintType), 3),
			bytes.Repeat(wireTag(3, protowire.EndGroupType), depth))
	}
	skipAll := func(b []byte) error {
		return NewBytesWalker(b, "m").Message(int64(len(b)), 0, "a message", func(Field) (bool, error) { return false, nil })
	}
	if err := skipAll(group(MaxDepth)); err != nil {
		t.Errorf("groups nested %d deep: %v", MaxDepth, err)
	}
	w := NewBytesWalker(group(1), "m")
	var value []byte
	if err := w.Message(w.Size(), 0, "a message", func(f Field) (bool, error) {
		var err error
		value, err = w.Value(f)
		return true, err
	}); err != nil || !bytes.Equal(value, group(1)[1:]) {
		t.Errorf("the value of a group: %x, %v; want its fields and end tag %x", value, err, group(1)[1:])
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"end group alone", wireTag(3, protowire.EndGroupType), "invalid wire type 4"},
		{"group without end", wireTag(3, protowire.StartGroupType), "has no end"},
		{"group ended by another", catBytes(wireTag(3, protowire.StartGroupType), wireTag(4, protowire.EndGroupType)), "ends with the tag of group 4"},
		{"group with a field number too large", catBytes(wireTag(3, protowire.StartGroupType),
			protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), []byte{0}, wireTag(3, protowire.EndGroupType)), "invalid field number"},
		{"groups nested too deep", group(MaxDepth + 1), "nested more than 100"},
	} {
		if err := skipAll(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestFieldsAllocatesNothing: Fields is called for every node and tensor of a model the
// converter loads, so it must not allocate.
func TestFieldsAllocatesNothing(t *testing.T) {
	msg := catBytes(
		protowire.AppendVarint(wireTag(1, protowire.VarintType), 300),
		protowire.AppendString(wireTag(4, protowire.BytesType), "abc"),
		protowire.AppendFixed32(wireTag(2, protowire.Fixed32Type), 1),
	)
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		_ = Fields(msg, func(f WireField) bool { n += int(f.Num); return true })
	})
	if allocs != 0 {
		t.Errorf("Fields allocates %v times a call", allocs)
	}
}

// TestPackedVarints: the values before a malformed one are met, and the payload is refused.
func TestPackedVarints(t *testing.T) {
	var got []uint64
	ok := PackedVarints([]byte{1, 0xac, 0x02, 0x80}, func(v uint64) { got = append(got, v) })
	if ok || !reflect.DeepEqual(got, []uint64{1, 300}) {
		t.Errorf("PackedVarints = %v, %v; want false, [1 300]", ok, got)
	}
	if !PackedVarints(nil, nil) || !PackedVarints([]byte{1, 2}, nil) {
		t.Error("valid payloads refused")
	}
}

// walkAll walks every message of data with w the way a reader that takes every field apart
// would: each length-delimited field is walked as a message when it parses as one (a field
// of a model, graph or node that holds a message), else its value is taken.
func walkAll(w *Walker, end int64, depth int, values *[][]byte) error {
	return w.Message(end, depth, "a message", func(f Field) (bool, error) {
		if f.Type == protowire.BytesType && depth < 3 {
			return true, walkAll(w, f.End, depth+1, values)
		}
		if w.r.src != nil {
			return false, nil
		}
		v, err := w.Value(f)
		*values = append(*values, v)
		return true, err
	})
}

// bundledModels are the bytes of every model in testdata/models.
func bundledModels(tb testing.TB) [][]byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(testmodels.BundledDir(tb), "*.onnx"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no bundled models: %v", err)
	}
	var models [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		models = append(models, b)
	}
	return models
}

// checkBytesWalker walks data with a Walker over bytes and one over a file: they must agree on
// the error, a one-line *FormatError, and Value must give each field's bytes as stored.
func checkBytesWalker(t *testing.T, data []byte) {
	t.Helper()
	fw := NewWalker(bytes.NewReader(data), int64(len(data)), "m.onnx")
	bw := NewBytesWalker(data, "m.onnx")
	var values [][]byte
	ferr := fw.Error(walkAll(fw, fw.Size(), 0, nil))
	berr := bw.Error(walkAll(bw, bw.Size(), 0, &values))
	if !reflect.DeepEqual(ferr, berr) {
		t.Fatalf("over the file %v, over bytes %v", ferr, berr)
	}
	var fe *FormatError
	if berr != nil && (!errors.As(berr, &fe) || strings.Contains(berr.Error(), "\n")) {
		t.Fatalf("%v is not a one-line *FormatError", berr)
	}
	for _, v := range values {
		if len(v) > 0 && !bytes.Contains(data, v) {
			t.Fatalf("a value that is not in the file")
		}
	}
}

// TestBytesWalkerIsTheFileWalker: a Walker over bytes refuses what a Walker over the same file
// refuses, with the same *FormatError.
func TestBytesWalkerIsTheFileWalker(t *testing.T) {
	for _, b := range bundledModels(t) {
		checkBytesWalker(t, b)
	}
	if _, err := NewWalker(bytes.NewReader(nil), 0, "x").Value(Field{}); err == nil {
		t.Error("Value over a file returned bytes")
	}
}

// FuzzBytesWalker: a Walker over bytes and one over a file agree on every input, and Fields
// with them.
func FuzzBytesWalker(f *testing.F) {
	for _, b := range bundledModels(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBytesWalker(t, data)
		// Fields agrees with the top level of the walk, which refuses groups as it does.
		var fields int
		errFields := Fields(data, func(WireField) bool { fields++; return true })
		top := 0
		errTop := NewBytesWalker(data, "x").Message(int64(len(data)), 0, "a message", func(f Field) (bool, error) {
			top++
			if f.Type == protowire.StartGroupType {
				return true, errors.New("a group")
			}
			return false, nil
		})
		if (errFields == nil) != (errTop == nil) || (errFields == nil && fields != top) {
			t.Fatalf("Fields: %d fields, %v; the Walker: %d, %v", fields, errFields, top, errTop)
		}
	})
}
