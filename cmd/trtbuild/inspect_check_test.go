package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// writeModel writes a generated model into a fresh folder and returns its path.
func writeModel(t *testing.T, g *onnxpb.GraphProto) string {
	t.Helper()
	data, err := tm.Marshal(tm.Model(g))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), g.Name+".onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInspectCheck runs the built binary's `inspect --check` as a CI job would: exit 0 for a
// build that would start, 1 with one line per reason for one that would be refused or is likely
// to fail, 2 for a model it cannot read or flags it cannot take.
func TestInspectCheck(t *testing.T) {
	t.Parallel()
	unique := writeModel(t, &onnxpb.GraphProto{Name: "unique",
		Input:  []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 8)},
		Output: []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, nil)},
		Node:   []*onnxpb.NodeProto{tm.Node("dedupe", "Unique", []string{"x"}, []string{"y"})}})
	escaping := writeModel(t, &onnxpb.GraphProto{Name: "escaping",
		Input:       []*onnxpb.ValueInfoProto{tm.Value("x", tm.F32, 4)},
		Output:      []*onnxpb.ValueInfoProto{tm.Value("y", tm.F32, 4)},
		Initializer: []*onnxpb.TensorProto{tm.External("w", []int64{4}, "../outside.bin", 0, 16)},
		Node:        []*onnxpb.NodeProto{tm.Node("add", "Add", []string{"x", "w"}, []string{"y"})}})
	// external_data.onnx without its data file beside it.
	missing := filepath.Join(t.TempDir(), "external_data.onnx")
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "external_data.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(missing, data, 0o644); err != nil {
		t.Fatal(err)
	}
	convnet := repoModel(t, "convnet.onnx")
	dynamic := repoModel(t, "dynamic_batch.onnx")
	tests := []struct {
		name   string
		args   []string
		code   int
		lines  []string // each a line prefix of stdout, in order (stdout has exactly these lines)
		stderr string
	}{
		{"a static model passes", []string{convnet}, 0, []string{"ok: a build of " + convnet + " would start"}, ""},
		{"a dynamic model with shapes passes", []string{dynamic, "--shapes", "images:4x3x64x64"}, 0, []string{"ok: "}, ""},
		{"trtexec spellings work", []string{dynamic, "--minShapes=images:1x3x64x64", "--optShapes=images:4x3x64x64", "--maxShapes=images:8x3x64x64"}, 0, []string{"ok: "}, ""},
		{"missing shapes are refused", []string{dynamic}, 1,
			[]string{`refused: input "images" has dynamic dimensions (batch x 3 x 64 x 64) and no shape was given; add: --min-shapes`}, "1 reason a build of dynamic_batch.onnx"},
		{"a huge batch", []string{dynamic, "--shapes", "images:99999999999x3x64x64"}, 1,
			[]string{`likely to fail: input "images": the shape 99999999999x3x64x64 is 1228799999987712 elements`}, ""},
		{"batch 0", []string{dynamic, "--shapes", "images:0x3x64x64"}, 1,
			[]string{`refused: input "images": the shape 0x3x64x64 gives dimension 0 (the batch) the size 0`}, "1 reason"},
		{"a shape the model does not take", []string{convnet, "--shapes", "images:99999999999x3x224x224"}, 1,
			[]string{`refused: --shapes images:99999999999x3x224x224 does not fit input "images"`}, ""},
		{"missing external data", []string{missing}, 1, []string{`refused: external data file "external_data.bin" (2 tensors) of external_data.onnx is missing`}, ""},
		{"escaping external data", []string{escaping}, 1, []string{`refused: escaping.onnx refers to external data file "../outside.bin" (1 tensor), which is refused because`}, ""},
		{"an operator TensorRT 10 does not import", []string{unique}, 1,
			[]string{`likely to fail: operator Unique (1 node: "dedupe") is not imported by the ONNX parser of TensorRT 10.15`}, ""},
		{"TensorRT 11 says which list it used", []string{unique, "--tensorrt-version", "11"}, 1,
			[]string{"likely to fail: operator Unique", "note: onnx-tensorrt publishes no operator list for TensorRT 11 yet"}, ""},
		{"another setting refused", []string{dynamic, "--shapes", "images:2x3x64x64", "--inputIOFormats", "fp16:chw,fp16:chw"}, 1,
			[]string{"refused: --inputIOFormats gives 2 formats"}, "1 reason"},
		{"a refusal and a risk", []string{unique, "--shapes", "x:9"}, 1,
			[]string{`refused: --shapes x:9 does not fit input "x"`, "likely to fail: operator Unique"}, "2 reasons a build of unique.onnx"},
		{"no TensorRT 9 list", []string{convnet, "--tensorrt-version", "9"}, 2, nil, "invalid --tensorrt-version 9"},
		{"not a model", []string{filepath.Join("..", "..", "testdata", "models", "random_bytes.onnx")}, 2, nil, "is not an ONNX model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, append([]string{"inspect", "--check"}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if r.stdout == "" {
				got = nil
			}
			if len(got) != len(tt.lines) {
				t.Fatalf("stdout has %d lines, want %d:\n%s", len(got), len(tt.lines), r.stdout)
			}
			for i, want := range tt.lines {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("line %d = %q\nwant it to start with %q", i, got[i], want)
				}
			}
			if !strings.Contains(r.stderr, tt.stderr) || (tt.code != 0 && strings.Count(r.stderr, "\n") != 1) {
				t.Errorf("stderr %q: want one line with %q", r.stderr, tt.stderr)
			}
		})
	}
}

func TestInspectCheckJSON(t *testing.T) {
	t.Parallel()
	dynamic := repoModel(t, "dynamic_batch.onnx")
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		ok    bool
		kinds []string
	}{
		{"ok", []string{"--shapes", "images:2x3x64x64"}, 0, true, nil},
		{"refused", nil, 1, false, []string{"refused"}},
		{"likely to fail", []string{"--shapes", "images:99999999999x3x64x64"}, 1, false, []string{"likely-fail"}},
		{"an impossible shape", []string{"--shapes", "images:0x3x64x64"}, 1, false, []string{"refused"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := trtbuild(t, nil, append([]string{"inspect", "--check", "--json", dynamic}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			var doc struct {
				V       int  `json:"v"`
				OK      bool `json:"ok"`
				Reasons []struct {
					Kind, Rule, Message string
				} `json:"reasons"`
				TensorRT string `json:"tensorrt_operators"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("not one JSON document: %v\n%s", err, r.stdout)
			}
			if doc.V != 1 || doc.OK != tt.ok || len(doc.Reasons) != len(tt.kinds) || doc.TensorRT != "10.15" {
				t.Fatalf("document %+v", doc)
			}
			for i, k := range tt.kinds {
				if doc.Reasons[i].Kind != k || doc.Reasons[i].Rule == "" || doc.Reasons[i].Message == "" {
					t.Errorf("reason %d = %+v, want kind %s", i, doc.Reasons[i], k)
				}
			}
		})
	}
}

// Without --check, inspect takes no build flag: it would silently ignore it.
func TestInspectBuildFlagNeedsCheck(t *testing.T) {
	t.Parallel()
	r := trtbuild(t, nil, "inspect", repoModel(t, "convnet.onnx"), "--shapes", "images:1x3x224x224")
	if r.code != 2 || !strings.Contains(r.stderr, "--shapes is a build flag, which inspect takes only with --check") || r.stdout != "" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
