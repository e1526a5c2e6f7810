package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
)

// runConvert runs trtbuild in this process with args and returns the exit
// code, stdout and stderr.
func runConvert(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := &streams{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := run(args, s)
	return code, out.String(), errb.String()
}

// convertModel copies a model of internal/convert's test data into a fresh folder.
func convertModel(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "convert", "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func readModel(t *testing.T, path string) *onnxpb.ModelProto {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func TestConvertCommand(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	in := convertModel(t, "mlp.onnx")
	out := filepath.Join(filepath.Dir(in), "half.onnx")
	code, stdout, stderr := runConvert(t, "convert", "--fp16", in, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"converted " + in + " to fp16", "nodes:        4 converted to float16, 1 kept in float32",
		"Softmax x1", "wrote:        " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	m := readModel(t, out)
	if dt := m.Graph.Initializer[0].GetDataType(); dt != int32(onnxpb.TensorProto_FLOAT16) {
		t.Errorf("first initializer is %d, want FLOAT16", dt)
	}
	if et := m.Graph.Input[0].Type.GetTensorType().GetElemType(); et != int32(onnxpb.TensorProto_FLOAT) {
		t.Errorf("input type %d, want FLOAT (kept by default)", et)
	}
}

func TestConvertCommandDefaultNameAndJSON(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	in := convertModel(t, "mlp.onnx")
	code, stdout, stderr := runConvert(t, "convert", "--bf16", "--json", "--keep-fp32-ops", "Relu", "--keep-io-types=false", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s struct {
		Target    string `json:"target"`
		KeptNodes []struct {
			Name, Reason string
		} `json:"kept_nodes"`
		Inputs []struct{ Name, Before, After string } `json:"inputs"`
		Files  struct {
			Model string `json:"model"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	want := filepath.Join(filepath.Dir(in), "mlp.bf16.onnx")
	if s.Target != "bf16" || s.Files.Model != want || len(s.Inputs) != 1 || s.Inputs[0].After != "bfloat16" {
		t.Errorf("summary %+v", s)
	}
	var kept []string
	for _, k := range s.KeptNodes {
		kept = append(kept, k.Name+":"+k.Reason)
	}
	if strings.Join(kept, " ") != "relu:keep-fp32-ops softmax:default-list" {
		t.Errorf("kept %v", kept)
	}
	if _, err := os.Stat(want); err != nil {
		t.Error(err)
	}
}

func TestConvertCommandWarnsOnOverflow(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	in := convertModel(t, "overflow.onnx")
	code, _, stderr := runConvert(t, "convert", "--fp16", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stderr, `trtbuild: warning: initializer "mask" has 4 values beyond float16's range`) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr = %q, want one overflow warning", stderr)
	}
}

func TestConvertCommandErrors(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	in := convertModel(t, "mlp.onnx")
	orig, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	if err := os.WriteFile(bad, orig[:len(orig)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	custom := convertModel(t, "custom_op.onnx")
	m := readModel(t, custom)
	m.Graph.ValueInfo = nil // the custom operator's output type is unknown now
	data, _ := proto.Marshal(m)
	if err := os.WriteFile(custom, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"convert", in}, "convert needs a target type: add --fp16 or --bf16"},
		{"two targets", []string{"convert", "--fp16", "--bf16", in}, "--fp16 and --bf16 together"},
		{"no model", []string{"convert", "--fp16"}, "convert takes one model file, got 0 arguments"},
		{"over the input", []string{"convert", "--fp16", in, "-o", in}, "is the model"},
		{"output is a folder", []string{"convert", "--fp16", in, "-o", filepath.Dir(in)}, "is a folder"},
		{"output folder missing", []string{"convert", "--fp16", in, "-o", filepath.Join(filepath.Dir(in), "no", "x.onnx")}, "does not exist; create it first"},
		{"damaged model", []string{"convert", "--fp16", bad}, "is truncated ("},
		{"missing model", []string{"convert", "--fp16", filepath.Join(t.TempDir(), "nope.onnx")}, "does not exist; check the path"},
		{"bad keep node", []string{"convert", "--fp16", in, "--keep-fp32-nodes", "nope"}, `the model has no node named "nope"`},
		{"bad keep", []string{"convert", "--fp16", in, "--keep-fp32", "Relu,nope"}, `--keep-fp32: "nope" is neither the name of a node of the model nor an operator type`},
		{"custom op", []string{"convert", "--fp16", custom}, `cannot tell the type of "s"`},
		{"old opset for bf16", []string{"convert", "--bf16", convertModel(t, "ir3.onnx")}, "needs ai.onnx opset 13 or newer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runConvert(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage)", code)
			}
			if !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "trtbuild: ") {
				t.Errorf("stderr = %q, want one line with %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
	if now, _ := os.ReadFile(in); !bytes.Equal(now, orig) {
		t.Fatal("the input model changed")
	}
}

// TestConvertCommandAlreadyConverted checks that converting a model that
// is already float16 says there is nothing to do, exits 0 and writes
// nothing.
func TestConvertCommandAlreadyConverted(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	in := filepath.Join(t.TempDir(), "fp16.onnx")
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "fp16.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(in), "out.onnx")
	code, stdout, stderr := runConvert(t, "convert", "--fp16", in, "-o", out)
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "nothing to convert: "+in+" has no float32 values") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a file was written")
	}
	code, stdout, _ = runConvert(t, "convert", "--fp16", "--json", in, "-o", out)
	if code != 0 || !strings.Contains(stdout, `"already_target": true`) {
		t.Errorf("--json: exit %d\n%s", code, stdout)
	}
}

// TestConvertCommandKeep checks --keep-fp32 with a node name and an
// operator type.
func TestConvertCommandKeep(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	in := convertModel(t, "mlp.onnx")
	out := filepath.Join(filepath.Dir(in), "out.onnx")
	code, stdout, stderr := runConvert(t, "convert", "--fp16", in, "-o", out, "--keep-fp32", "Relu,mm2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"name": "relu"`, `"name": "mm2"`, `"reason": "keep-fp32"`, `"detail": "node named in --keep-fp32"`, `"detail": "operator named in --keep-fp32"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %s:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}
