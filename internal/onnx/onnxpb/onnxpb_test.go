package onnxpb_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// The node counts of the shared models, from their README.
var sharedNodes = map[string]int{
	"light_bvlc_alexnet.onnx": 40,
	"light_squeezenet.onnx":   105,
	"light_inception_v1.onnx": 237,
	"light_resnet50.onnx":     415,
}

func TestSharedModelsRoundTrip(t *testing.T) {
	for _, path := range testmodels.Shared(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var m onnxpb.ModelProto
			if err := proto.Unmarshal(data, &m); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if m.GetIrVersion() == 0 || len(m.GetOpsetImport()) == 0 {
				t.Fatalf("ir_version %d, %d opset imports: not read", m.GetIrVersion(), len(m.GetOpsetImport()))
			}
			if want, ok := sharedNodes[filepath.Base(path)]; ok && len(m.GetGraph().GetNode()) != want {
				t.Fatalf("%d nodes, want %d", len(m.GetGraph().GetNode()), want)
			}
			if len(m.ProtoReflect().GetUnknown()) != 0 {
				t.Fatalf("ModelProto has unknown fields: the schema misses something")
			}
			out, err := proto.MarshalOptions{Deterministic: true}.Marshal(&m)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var back onnxpb.ModelProto
			if err := proto.Unmarshal(out, &back); err != nil {
				t.Fatalf("Unmarshal of re-encoded model: %v", err)
			}
			if !proto.Equal(&m, &back) {
				t.Fatal("model changed in a Marshal/Unmarshal round trip")
			}
		})
	}
}

// TestUnknownFieldsSurvive checks that fields this schema does not know, at
// the top level and deep inside a node, survive a read-modify-write.
func TestUnknownFieldsSurvive(t *testing.T) {
	const unknownField = 4242
	extra := protowire.AppendTag(nil, unknownField, protowire.BytesType)
	extra = protowire.AppendString(extra, "from the future")

	node, err := proto.Marshal(&onnxpb.NodeProto{Name: "n0", OpType: "Relu", Input: []string{"x"}, Output: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	node = append(node, extra...)
	graph := protowire.AppendTag(nil, 1, protowire.BytesType) // GraphProto.node
	graph = protowire.AppendBytes(graph, node)
	graph = protowire.AppendTag(graph, 2, protowire.BytesType) // GraphProto.name
	graph = protowire.AppendString(graph, "g")
	model := protowire.AppendTag(nil, 1, protowire.VarintType) // ModelProto.ir_version
	model = protowire.AppendVarint(model, 8)
	model = protowire.AppendTag(model, 7, protowire.BytesType) // ModelProto.graph
	model = protowire.AppendBytes(model, graph)
	model = append(model, extra...)

	var m onnxpb.ModelProto
	if err := proto.Unmarshal(model, &m); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	m.ProducerName = "trtbuild"
	m.Graph.Node[0].OpType = "Sigmoid"
	out, err := proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var back onnxpb.ModelProto
	if err := proto.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.GetProducerName() != "trtbuild" || back.GetGraph().GetNode()[0].GetOpType() != "Sigmoid" {
		t.Fatalf("modification lost: %v", &back)
	}
	for what, unknown := range map[string][]byte{
		"ModelProto": back.ProtoReflect().GetUnknown(),
		"NodeProto":  back.GetGraph().GetNode()[0].ProtoReflect().GetUnknown(),
	} {
		num, typ, n := protowire.ConsumeTag(unknown)
		if n < 0 || num != unknownField || typ != protowire.BytesType {
			t.Fatalf("%s lost its unknown field: %x", what, unknown)
		}
		v, m := protowire.ConsumeString(unknown[n:])
		if m < 0 || v != "from the future" {
			t.Fatalf("%s unknown field value = %q", what, v)
		}
	}
}
