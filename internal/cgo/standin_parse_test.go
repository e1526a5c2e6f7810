package cgo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestStandInParsesAsTensorRT: the stand-in's parser, given the repository's test models
// through the shim, reads what TensorRT's reads (static and dynamic inputs, int64 inputs,
// control flow, external data, float16) and builds them, the dynamic ones with the shim's
// fallback profile; it refuses what TensorRT's refuses with the IParserError that TensorRT 10's
// and 11's parser (onnx-tensorrt) records: a file protobuf cannot parse as a ModelProto (cut
// short, not protobuf, subgraphs nested past protobuf's recursion limit) fails deserializeOnnxModel's
// check, kMODEL_DESERIALIZE_FAILED; a node that no importer serves and no plugin implements fails
// the static check of the plugin fallback, kINVALID_NODE, with the node's index, name and
// operator.
func TestStandInParsesAsTensorRT(t *testing.T) {
	const notAModel = "Assertion failed: model->ParseFromCodedStream(&codedInput): Failed to parse the ONNX model. (MODEL_DESERIALIZE_FAILED)"
	for _, tc := range []struct {
		model string
		fail  string // the parser's one error, as the shim quotes it; "" builds
	}{
		{"convnet.onnx", ""},
		{"dynamic_batch.onnx", ""},
		{"two_inputs_dynamic.onnx", ""},
		{"bert_tiny.onnx", ""},
		{"transformer_block.onnx", ""},
		{"external_data.onnx", ""},
		{"fp16.onnx", ""},
		{"control_flow.onnx", ""},
		{"custom_op.onnx", `node 0 (act/swish, Swish): creator && "Plugin not found, are the plugin name, version, and namespace correct?" (INVALID_NODE)`},
		{"truncated.onnx", notAModel},
		{"random_bytes.onnx", notAModel},
		{"wrong_magic.onnx", notAModel},
		{"nested_length_bomb.onnx", notAModel},
	} {
		for _, c := range CompiledShims() {
			t.Run(fmt.Sprintf("%s/TensorRT %d", tc.model, c.Major()), func(t *testing.T) {
				t.Parallel()
				model := testmodels.Bundled(t, tc.model)
				got := standinBuild(t, standinJob{Major: c.Major(), Settings: "step=1us", Model: model, OptLevel: -1})
				want := "cannot parse " + model + ": " + tc.fail
				switch {
				case tc.fail == "" && (got.Error != "" || got.Result.PlanBytes == 0):
					t.Errorf("build failed: %s", got.Error)
				case tc.fail != "" && (got.Code != CodeParse || !strings.HasSuffix(got.Error, want)):
					t.Errorf("build: %v %q, want a parse error ending %q", got.Code, got.Error, want)
				}
				if tc.fail == "" {
					statsOf(t, tc.model, progressOf(got.Events))
				}
			})
		}
	}
}

// TestStandInNestsAsProtobuf: the stand-in's parser fails a model whose If subgraphs nest past
// protobuf's recursion limit, as TensorRT's does (protobuf C++ with its default limit of 100
// messages below the model, each If level three: graph, node, attribute), and reads one just
// inside it. protobuf-go, which counts the model itself too, agrees at a limit of 101.
func TestStandInNestsAsProtobuf(t *testing.T) {
	for _, tc := range []struct {
		levels int
		fails  bool
	}{{32, false}, {33, true}} {
		b, err := proto.Marshal(nestedIfModel(tc.levels))
		if err != nil {
			t.Fatal(err)
		}
		if err := (proto.UnmarshalOptions{RecursionLimit: 101}).Unmarshal(b, &onnxpb.ModelProto{}); (err != nil) != tc.fails {
			t.Fatalf("%d levels: protobuf-go says %v", tc.levels, err)
		}
		model := filepath.Join(testDir(t), fmt.Sprintf("nested_%d.onnx", tc.levels))
		if err := os.WriteFile(model, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range CompiledShims() {
			t.Run(fmt.Sprintf("%d levels/TensorRT %d", tc.levels, c.Major()), func(t *testing.T) {
				t.Parallel()
				got := standinBuild(t, standinJob{Major: c.Major(), Settings: "step=1us", Model: model, OptLevel: -1})
				if failed := got.Code == CodeParse && strings.Contains(got.Error, "(MODEL_DESERIALIZE_FAILED)"); failed != tc.fails ||
					(!tc.fails && got.Error != "") {
					t.Errorf("build: %v %q, want a failed parse: %v", got.Code, got.Error, tc.fails)
				}
			})
		}
	}
}

// nestedIfModel is a model whose graph holds an If node whose branch holds an If node ...
// levels deep, the innermost branch an Identity.
func nestedIfModel(levels int) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{Node: []*onnxpb.NodeProto{{OpType: "Identity", Input: []string{"x"}, Output: []string{"y"}}}}
	for i := 0; i < levels; i++ {
		g = &onnxpb.GraphProto{Node: []*onnxpb.NodeProto{{OpType: "If", Input: []string{"x"}, Output: []string{"y"},
			Attribute: []*onnxpb.AttributeProto{{Name: "then_branch", G: g, Type: onnxpb.AttributeProto_GRAPH}}}}}
	}
	g.Input = []*onnxpb.ValueInfoProto{testmodels.Value("x", testmodels.F32, 1, 8)}
	g.Output = []*onnxpb.ValueInfoProto{testmodels.Value("y", testmodels.F32, 1, 8)}
	return testmodels.Model(g)
}
