package testmodels

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// TestScaleModels decodes small versions of the scale benchmark's models
// and checks their structure: a broken generator would make the
// benchmark measure a refusal instead of a conversion.
func TestScaleModels(t *testing.T) {
	decode := func(t *testing.T, b []byte) *onnxpb.ModelProto {
		t.Helper()
		var m onnxpb.ModelProto
		if err := proto.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return &m
	}
	var buf bytes.Buffer
	if err := WriteManyNodes(&buf, 3); err != nil {
		t.Fatal(err)
	}
	m := decode(t, buf.Bytes())
	g := m.Graph
	if len(g.Node) != 3 || len(g.Initializer) != 3 || g.Node[2].OpType != "Add" || g.Node[2].Input[0] != "y2" || g.Node[2].Input[1] != "w2" ||
		g.Output[0].GetName() != "y3" || len(g.Initializer[1].RawData) != 4*SmallWeights || g.Input[0].GetName() != "x" {
		t.Errorf("many nodes: %v", g)
	}
	buf.Reset()
	if err := WriteIdentityChain(&buf, 4); err != nil {
		t.Fatal(err)
	}
	g = decode(t, buf.Bytes()).Graph
	if len(g.Node) != 4 || g.Node[3].OpType != "Identity" || g.Node[3].Input[0] != "y3" || g.Output[0].GetName() != "y4" {
		t.Errorf("identity chain: %v", g)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ext.onnx")
	if err := WriteExternalChain(path, "ext.onnx.data", 2); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g = decode(t, b).Graph
	st, err := os.Stat(path + ".data")
	if err != nil || st.Size() != 2*4<<20 {
		t.Fatalf("data file: %v %v", st, err)
	}
	w := g.Initializer[1]
	if len(g.Node) != 2 || w.GetDataLocation() != onnxpb.TensorProto_EXTERNAL || len(w.ExternalData) != 3 ||
		w.ExternalData[1].GetValue() != "4194304" || w.ExternalData[0].GetValue() != "ext.onnx.data" {
		t.Errorf("external chain: %v", g)
	}
}
