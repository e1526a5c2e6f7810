package modelio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// TestLoadRefusesFieldNumbersProtobufRefuses: the parts Load takes apart in memory are read
// with onnx.Fields, under the rules of onnx's Walker, so a field number above
// protowire.MaxValidNumber is refused there as in the model's top level: the compact form
// would copy it into a model that does not decode.
func TestLoadRefusesFieldNumbersProtobufRefuses(t *testing.T) {
	big := protowire.AppendVarint(protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), 1)
	dir := t.TempDir()
	for name, damage := range map[string]func(m *onnxpb.ModelProto){
		"node":        func(m *onnxpb.ModelProto) { m.Graph.Node[0].ProtoReflect().SetUnknown(big) },
		"initializer": func(m *onnxpb.ModelProto) { m.Graph.Initializer[1].ProtoReflect().SetUnknown(big) },
		"graph":       func(m *onnxpb.ModelProto) { m.Graph.ProtoReflect().SetUnknown(big) },
	} {
		t.Run(name, func(t *testing.T) {
			m := testModel()
			damage(m)
			path := filepath.Join(dir, name+".onnx")
			writeProto(t, path, m)
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "invalid field number 536870912") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Load = %v, want a one-line error naming the field number", err)
			}
		})
	}
}

// TestExternalDataIsReadWithOpenExternal: external data is opened with onnx.OpenExternal when
// it is read, not only checked when the model is loaded: a link planted in the model's folder
// after Load, leading out of it, is refused by ReadData; one that stays inside is read.
func TestExternalDataIsReadWithOpenExternal(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := floats(64*64, 0.5)
	for _, p := range []string{filepath.Join(dir, "w.bin"), filepath.Join(dir, "real.bin"), filepath.Join(root, "secret.bin")} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("real.bin", filepath.Join(dir, "inside.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secret.bin"), filepath.Join(dir, "escape.bin")); err != nil {
		t.Fatal(err)
	}

	// A link that stays in the folder is read.
	path := filepath.Join(dir, "inside.onnx")
	writeProto(t, path, externalModel("inside.bin", "0", ""))
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dataOf(t, m, &m.Graph.Inits[0]), data) {
		t.Fatal("the data behind a link inside the folder was not read")
	}

	// One that leads out is refused by Load, for a main-graph initializer and a subgraph's.
	path = filepath.Join(dir, "escape.onnx")
	writeProto(t, path, externalModel("escape.bin", "0", ""))
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "is a link that leads out of the model's folder") {
		t.Errorf("Load (initializer behind an escaping link) = %v", err)
	}
	sub := proto.Clone(externalModel("escape.bin", "0", "")).(*onnxpb.ModelProto)
	body := &onnxpb.GraphProto{Name: "body", Initializer: sub.Graph.Initializer[:1]}
	sub.Graph.Initializer = sub.Graph.Initializer[1:]
	sub.Graph.Node = append(sub.Graph.Node, &onnxpb.NodeProto{Name: "loop", OpType: "Loop", Output: []string{"o"},
		Attribute: []*onnxpb.AttributeProto{{Name: "body", Type: onnxpb.AttributeProto_GRAPH, G: body}}})
	path = filepath.Join(dir, "sub.onnx")
	writeProto(t, path, sub)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "leads out of the model's folder") {
		t.Errorf("Load (subgraph tensor behind an escaping link) = %v", err)
	}

	// A link planted after Load, where the data file was, is refused when the data is read.
	path = filepath.Join(dir, "planted.onnx")
	writeProto(t, path, externalModel("w.bin", "0", ""))
	m, err = Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "w.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secret.bin"), filepath.Join(dir, "w.bin")); err != nil {
		t.Fatal(err)
	}
	err = m.ReadData(&m.Graph.Inits[0], func([]byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "is a link that leads out of the model's folder") {
		t.Errorf("ReadData through a planted link = %v", err)
	}
}
