package inspect

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// pythonWithONNX returns a Python interpreter that can import onnx, trying
// $TRTBUILD_PYTHON, python3 on PATH and Debian's /usr/bin/python3 (where the
// python3-onnx package installs), or skips the test.
func pythonWithONNX(t *testing.T) string {
	t.Helper()
	candidates := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("TRTBUILD_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, c := range candidates {
		if exec.Command(c, "-c", "import onnx").Run() == nil {
			return c
		}
	}
	t.Skip("no Python with the onnx package (on Debian: apt-get install python3-onnx)")
	return ""
}

// pyModel is what scripts/check/onnx-describe.py reports for one model.
type pyModel struct {
	IRVersion    int64     `json:"ir_version"`
	Opsets       [][2]any  `json:"opsets"`
	Nodes        int       `json:"nodes"`
	Initializers int       `json:"initializers"`
	Inputs       []pyValue `json:"inputs"`
	Outputs      []pyValue `json:"outputs"`
	Checker      string    `json:"checker"`
}

type pyValue struct {
	Name     string `json:"name"`
	ElemType int32  `json:"elem_type"`
	Shape    []any  `json:"shape"`
}

// TestAgreesWithONNXPython checks that onnx.checker accepts every model the
// generator writes, and that inspect's JSON agrees with onnx.load on the
// inputs, outputs, node counts and opsets of those and of the shared models.
func TestAgreesWithONNXPython(t *testing.T) {
	python := pythonWithONNX(t)
	root := testmodels.RepoRoot(t)
	var generated []string
	for _, name := range []string{"convnet", "dynamic_batch", "two_inputs_dynamic", "external_data", "fp16", "custom_op", "control_flow"} {
		generated = append(generated, testmodels.Bundled(t, name+".onnx"))
	}
	var shared []string
	if entries, err := filepath.Glob(filepath.Join(root, "..", "shared", "models", "*.onnx")); err == nil {
		shared = entries
	}
	script := filepath.Join(root, "scripts", "check", "onnx-describe.py")
	describe := func(check bool, paths []string) map[string]pyModel {
		args := []string{script}
		if check {
			args = append(args, "--check")
		}
		cmd := exec.Command(python, append(args, paths...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, stderr.Bytes())
		}
		var got map[string]pyModel
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s output: %v", script, err)
		}
		return got
	}
	py := describe(true, generated)
	for p, m := range describe(false, shared) {
		py[p] = m
	}
	for _, path := range append(generated, shared...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := py[path]
			if want.Checker != "" && want.Checker != "ok" {
				t.Errorf("onnx.checker refuses the generated model: %s", want.Checker)
			}
			m, err := onnx.ReadMetadata(path)
			if err != nil {
				t.Fatal(err)
			}
			var js bytes.Buffer
			if err := JSON(&js, m, filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
			var got Report
			if err := json.Unmarshal(js.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Nodes != want.Nodes || got.IRVersion != want.IRVersion {
				t.Errorf("inspect: %d nodes, IR %d; onnx.load: %d nodes, IR %d", got.Nodes, got.IRVersion, want.Nodes, want.IRVersion)
			}
			if got.SubgraphNodes == 0 && got.Initializers != want.Initializers {
				t.Errorf("inspect: %d initializers; onnx.load: %d", got.Initializers, want.Initializers)
			}
			var opsets [][2]any
			for _, o := range got.Opsets {
				opsets = append(opsets, [2]any{o.Domain, float64(o.Version)})
			}
			if !reflect.DeepEqual(opsets, want.Opsets) {
				t.Errorf("inspect opsets %v; onnx.load %v", opsets, want.Opsets)
			}
			compareValues(t, "input", got.Inputs, want.Inputs)
			compareValues(t, "output", got.Outputs, want.Outputs)
		})
	}
}

func compareValues(t *testing.T, what string, got []Value, want []pyValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("inspect: %d %ss; onnx.load: %d", len(got), what, len(want))
		return
	}
	for i := range got {
		g := pyValue{Name: got[i].Name, ElemType: got[i].ElemType, Shape: got[i].Shape}
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("%s %d: inspect %+v; onnx.load %+v", what, i, g, want[i])
		}
	}
}
