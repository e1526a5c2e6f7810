package convert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	tm "github.com/trtbuild/trtbuild/internal/testmodels"
)

// python returns a Python interpreter that can import onnx: $TRTBUILD_PYTHON,
// python3 on PATH, or Debian's /usr/bin/python3 (where python3-onnx installs
// it, even when another python3 comes first on PATH). The test is skipped when
// there is none (CI installs Debian's python3-onnx).
func python(t *testing.T) string {
	t.Helper()
	candidates := []string{"python3", "/usr/bin/python3"}
	if py := os.Getenv("TRTBUILD_PYTHON"); py != "" {
		candidates = []string{py}
	}
	var why []string
	for _, py := range candidates {
		out, err := exec.Command(py, "-c", "import onnx").CombinedOutput()
		if err == nil {
			return py
		}
		why = append(why, fmt.Sprintf("%s: %v: %s", py, err, bytes.TrimSpace(out)))
	}
	t.Skipf("no Python with the onnx package (%s); install python3-onnx or set TRTBUILD_PYTHON", strings.Join(why, "; "))
	return ""
}

// onnxCheck runs testdata/check_onnx.py on the models and fails the test
// for each one that onnx.checker (full_check) or strict type inference
// rejects.
func onnxCheck(t *testing.T, py string, paths []string) {
	t.Helper()
	if len(paths) == 0 {
		t.Fatal("no models to check")
	}
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "check_onnx.py")}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check_onnx.py: %v\n%s", err, stderr.Bytes())
	}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Path  string `json:"path"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check_onnx.py printed %q: %v", sc.Text(), err)
		}
		seen++
		if !r.OK {
			t.Errorf("%s: %s", r.Path, r.Error)
		}
	}
	if seen != len(paths) {
		t.Fatalf("check_onnx.py reported %d models of %d\n%s", seen, len(paths), stderr.Bytes())
	}
}

func writeModelFile(t *testing.T, path string, c goldenCase) {
	t.Helper()
	b, err := proto.Marshal(c.model())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConvertedModelsPassONNXChecks converts every generated case and the
// bundled test models and has the onnx package check the inputs and the
// results: checker.check_model(full_check=True) and
// infer_shapes(check_type=True, strict_mode=True).
func TestConvertedModelsPassONNXChecks(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var paths []string
	for _, c := range goldenCases() {
		in := filepath.Join(dir, c.name+".onnx")
		writeModelFile(t, in, c)
		outDir := filepath.Join(dir, c.name)
		if err := os.Mkdir(outDir, 0o755); err != nil {
			t.Fatal(err)
		}
		out, _, err := ConvertFile(in, outDir, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		paths = append(paths, in, out)
	}
	bundled := []string{"convnet.onnx", "dynamic_batch.onnx", "two_inputs_dynamic.onnx", "external_data.onnx", "fp16.onnx", "control_flow.onnx"}
	for _, name := range bundled {
		// Copies: ConvertFile hands back a model already in the target
		// type, and check_model(full_check=True) of onnx 1.12 writes the
		// inferred shapes into the file it checks.
		in := filepath.Join(dir, "bundled", name)
		copyBundled(t, name, in)
		for _, target := range []Target{FP16, BF16} {
			outDir := filepath.Join(dir, string(target))
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			out, _, err := ConvertFile(in, outDir, Options{Target: target})
			if err != nil {
				t.Fatalf("%s to %s: %v", name, target, err)
			}
			paths = append(paths, out)
		}
	}
	onnxCheck(t, py, paths)
}

// copyBundled copies the bundled model name, and its external data file if
// it has one, to dst.
func copyBundled(t *testing.T, name, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	src := tm.Bundled(t, name)
	files := map[string]string{src: dst}
	if name == "external_data.onnx" {
		files[filepath.Join(filepath.Dir(src), "external_data.bin")] = filepath.Join(filepath.Dir(dst), "external_data.bin")
	}
	for from, to := range files {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatalf("bundled model: %v", err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSharedModels converts the real models in ../shared/models, when
// present, and checks the results with the onnx package.
func TestSharedModels(t *testing.T) {
	shared := tm.Shared(t)
	py := python(t)
	dir := t.TempDir()
	var paths []string
	for _, in := range shared {
		out, s, err := ConvertFile(in, dir, Options{Target: FP16})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if out == in { // the checker below may write into the files it checks
			t.Errorf("%s: already float16, nothing converted", in)
			continue
		}
		paths = append(paths, out)
		if s.Nodes.Converted == 0 || s.Constants.Converted == 0 {
			t.Errorf("%s: nothing converted: %+v", in, s)
		}
		for _, k := range s.KeptNodes {
			if k.Reason != ReasonDefault || (k.Op != "Softmax" && k.Op != "LRN") {
				t.Errorf("%s: unexpected kept node %+v", in, k)
			}
		}
		// These models import opset 9: bfloat16 needs Cast-13.
		if _, _, err := ConvertFile(in, dir, Options{Target: BF16}); err == nil || !strings.Contains(err.Error(), "opset 13 or newer") {
			t.Errorf("%s to bf16: err = %v, want the opset 13 requirement", in, err)
		}
	}
	onnxCheck(t, py, paths)
}
