package buildkey

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/trtbuild/trtbuild/internal/convert/modelio"
	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// nested is a model whose graph holds k levels of If subgraphs, the innermost with a Constant
// node whose tensor w is at message depth 4+3k: the main graph is at depth 1 and each
// subgraph adds three levels (node, attribute, graph).
func nested(k int, w *onnxpb.TensorProto) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{Name: "inner", Node: []*onnxpb.NodeProto{tm.Node("c", "Constant", nil, []string{"k"}, tm.AttrTensor("value", w))}}
	for i := 0; i < k; i++ {
		g = &onnxpb.GraphProto{Name: fmt.Sprintf("g%d", i),
			Node: []*onnxpb.NodeProto{tm.Node(fmt.Sprintf("if%d", i), "If", []string{"c"}, []string{"y"}, tm.AttrGraph("then_branch", g))}}
	}
	return tm.Model(g)
}

// TestDepthLimitIsONNXs: the hasher takes a model apart with package onnx's Walker, so it
// accepts the nesting ReadMetadata accepts, up to onnx.MaxDepth, where it used to stop at 64;
// both refuse one level more. The converter's Load reads what they accept.
func TestDepthLimitIsONNXs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(1, 2, 3, 4), 0o644); err != nil {
		t.Fatal(err)
	}
	inline := func() *onnxpb.TensorProto { return tm.Floats("W", []int64{4}, []float32{1, 2, 3, 4}) }
	cases := []struct {
		name  string
		m     *onnxpb.ModelProto
		depth int // of the deepest message
		ok    bool
	}{
		{"a tensor at depth 64", nested(20, inline()), 64, true},
		{"a tensor at depth 67", nested(21, inline()), 67, true},
		{"a tensor at depth 100", nested(32, inline()), 100, true},
		{"a node at depth 101", nested(33, inline()), 101, false},
		{"an external_data entry at depth 101", nested(32, tm.External("W", []int64{4}, "w.bin", 0, 16)), 101, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.depth <= onnx.MaxDepth) != c.ok {
				t.Fatalf("the case is wrong")
			}
			path := write(t, dir, fmt.Sprintf("nested%d.onnx", i), c.m)
			_, herr := HashModel(path)
			_, rerr := onnx.ReadMetadata(path)
			if (herr == nil) != c.ok || (rerr == nil) != c.ok {
				t.Fatalf("HashModel: %v; ReadMetadata: %v; want them to succeed: %v", herr, rerr, c.ok)
			}
			if !c.ok {
				want := fmt.Sprintf("nested more than %d messages deep", onnx.MaxDepth)
				if !strings.Contains(herr.Error(), want) || !strings.Contains(rerr.Error(), want) {
					t.Errorf("HashModel: %v; ReadMetadata: %v; want both to say %q", herr, rerr, want)
				}
				return
			}
			if _, err := modelio.Load(path); err != nil {
				t.Errorf("modelio.Load: %v", err)
			}
		})
	}
}

// TestFieldNumberLimitIsONNXs: a field number above protowire.MaxValidNumber, which no protobuf
// parser of 32-bit tags reads, is refused by the hasher as by ReadMetadata.
func TestFieldNumberLimitIsONNXs(t *testing.T) {
	dir := t.TempDir()
	m := model([]float32{1, 2, 3, 4}, "Relu", 0)
	withUnknown(m.Graph.Node[0], varintField(protowire.MaxValidNumber+1, 1))
	path := write(t, dir, "m.onnx", m)
	_, herr := HashModel(path)
	_, rerr := onnx.ReadMetadata(path)
	if herr == nil || rerr == nil || !strings.Contains(herr.Error(), "invalid field number") {
		t.Fatalf("HashModel: %v; ReadMetadata: %v; want both to refuse the field number", herr, rerr)
	}
	m.Graph.Node[0].ProtoReflect().SetUnknown(varintField(protowire.MaxValidNumber, 1))
	path = write(t, dir, "max.onnx", m)
	if _, err := HashModel(path); err != nil {
		t.Errorf("HashModel of field %d: %v", protowire.MaxValidNumber, err)
	}
}
