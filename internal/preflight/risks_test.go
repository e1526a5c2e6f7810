package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/parserops"
	"github.com/trtbuild/trtbuild/internal/shapes"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// riskModel writes a one-node model whose input x has dims and whose node is op, and reads it.
func riskModel(t *testing.T, op string, dims ...any) *onnx.Model {
	t.Helper()
	g := &onnxpb.GraphProto{
		Name:   "risk",
		Input:  []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, dims...)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, dims...)},
		Node:   []*onnxpb.NodeProto{tm.Node("n1", op, []string{"x"}, []string{"y"})},
	}
	return writeRead(t, tm.Model(g))
}

func writeRead(t *testing.T, mp *onnxpb.ModelProto) *onnx.Model {
	t.Helper()
	data, err := tm.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.ReadMetadata(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func profile(name string, min, opt, max []int64) []shapes.Profile {
	return []shapes.Profile{{Inputs: []shapes.Input{{Name: name, Min: min, Opt: opt, Max: max}}}}
}

func TestRisks(t *testing.T) {
	ops, _, err := parserops.For(10)
	if err != nil {
		t.Fatal(err)
	}
	img := []int64{1, 3, 224, 224}
	huge := []int64{99999999999, 3, 224, 224}
	tests := []struct {
		name     string
		m        *onnx.Model
		profiles []shapes.Profile
		rules    []string // the rules found, in order
		text     string   // in the first message
	}{
		{"static and supported", riskModel(t, "Relu", 1, 3, 224, 224), nil, nil, ""},
		{"Unique is not imported", riskModel(t, "Unique", 1, 3, 224, 224), nil, []string{"unsupported-op"},
			`operator Unique (1 node: "n1") is not imported by the ONNX parser of TensorRT 10.15`},
		{"an operator the list lacks", riskModel(t, "NoSuchOp", 4), nil, []string{"unsupported-op"},
			"is not in onnx-tensorrt's operator list for"},
		{"a huge static input", riskModel(t, "Relu", 65536, 65536), nil, []string{"shape-volume"},
			"4294967296 elements"},
		{"a huge profile", riskModel(t, "Relu", "batch", 3, 224, 224), profile("x", huge, huge, huge), []string{"shape-volume"},
			"the shape 99999999999x3x224x224 is 15052799999849472 elements"},
		{"a huge max only", riskModel(t, "Relu", "batch", 3, 224, 224), profile("x", img, img, huge), []string{"shape-volume"},
			"the max shape 99999999999x3x224x224 is 15052799999849472 elements"},
		{"a huge static input in the second profile", riskModel(t, "Relu", "batch", 3, 224, 224),
			append(profile("x", img, img, img), profile("x", img, img, huge)...), []string{"shape-volume"}, "the max shape 99999999999x3x224x224 in profile 1"},
		// What the build refuses (limits.go) is no risk: inspect --check reports the refusal.
		{"an overflowing profile", riskModel(t, "Relu", "a", "b"), profile("x", []int64{1, 1}, []int64{1, 1}, []int64{1 << 62, 1 << 62}), nil, ""},
		{"batch 0", riskModel(t, "Relu", "batch", 3), profile("x", []int64{0, 3}, []int64{0, 3}, []int64{0, 3}), nil, ""},
		// An engine whose min has a 0 also takes empty inputs: TensorRT supports empty tensors.
		{"batch 0 in min only", riskModel(t, "Relu", "batch", 3, 224, 224), profile("x", []int64{0, 3, 224, 224}, img, img), nil, ""},
		{"a fine profile", riskModel(t, "Relu", "batch", 3, 224, 224), profile("x", img, img, []int64{32, 3, 224, 224}), nil, ""},
		{"shapes and operators", riskModel(t, "Unique", "batch", 3, 224, 224), profile("x", huge, huge, huge),
			[]string{"shape-volume", "unsupported-op"}, "the shape 99999999999x3x224x224 is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			risks := Risks(tt.m, tt.profiles, ops)
			var rules []string
			for _, r := range risks {
				rules = append(rules, r.Rule)
				if strings.Contains(r.Message, "\n") {
					t.Errorf("message of %d lines: %q", strings.Count(r.Message, "\n")+1, r.Message)
				}
			}
			if strings.Join(rules, ",") != strings.Join(tt.rules, ",") {
				t.Fatalf("rules %v, want %v (%+v)", rules, tt.rules, risks)
			}
			if tt.text != "" && !strings.Contains(risks[0].Message, tt.text) {
				t.Errorf("message %q does not contain %q", risks[0].Message, tt.text)
			}
		})
	}
}

// An unsupported operator inside an If branch is found as well.
func TestRisksSubgraph(t *testing.T) {
	ops, _, _ := parserops.For(10)
	branch := &onnxpb.GraphProto{Name: "then", Output: []*onnxpb.ValueInfoProto{tm.Value("u", tm.F32, 4)},
		Node: []*onnxpb.NodeProto{tm.Node("inner_unique", "Unique", []string{"x"}, []string{"u"})}}
	g := &onnxpb.GraphProto{
		Name:   "cond",
		Input:  []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 4), tm.Value("c", onnxpb.TensorProto_BOOL)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, 4)},
		Node: []*onnxpb.NodeProto{tm.Node("if", "If", []string{"c"}, []string{"y"},
			tm.AttrGraph("then_branch", branch), tm.AttrGraph("else_branch", branch))},
	}
	risks := Risks(writeRead(t, tm.Model(g)), nil, ops)
	if len(risks) != 1 || !strings.Contains(risks[0].Message, `2 nodes: "inner_unique", "inner_unique"`) {
		t.Fatalf("risks = %+v, want Unique in both branches", risks)
	}
}
