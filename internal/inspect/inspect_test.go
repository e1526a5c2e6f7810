package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/onnx"
	"github.com/trtbuild/trtbuild/internal/onnx/onnxpb"
	"github.com/trtbuild/trtbuild/internal/testmodels"

	"github.com/trtbuild/trtbuild/internal/goldenfile"
)

// relPath returns path relative to the test's working directory, so that
// golden files do not depend on where the repository is.
func relPath(t *testing.T, path string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got)
}

// checkGolden writes the text and JSON reports of the model at path and
// compares them with the golden files. With pinSize false the file size is
// left out (shown as 0): the shared models are sometimes re-encoded, which
// changes their size but not what the goldens pin.
func checkGolden(t *testing.T, path string, pinSize bool) {
	t.Helper()
	rel := relPath(t, path)
	m, err := onnx.ReadMetadata(rel)
	if err != nil {
		t.Fatal(err)
	}
	if !pinSize {
		m.FileSize = 0
	}
	base := strings.TrimSuffix(filepath.Base(path), ".onnx")
	var text, js bytes.Buffer
	if err := Text(&text, m, filepath.Dir(rel)); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, m, filepath.Dir(rel)); err != nil {
		t.Fatal(err)
	}
	golden(t, base+".txt", text.Bytes())
	golden(t, base+".json", js.Bytes())

	// The JSON is a valid document that agrees with the model.
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON output does not parse: %v", err)
	}
	if back.Nodes != len(m.Nodes) || len(back.Inputs) != len(m.Inputs) || back.V != SchemaVersion {
		t.Fatalf("JSON says %d nodes and %d inputs, model has %d and %d", back.Nodes, len(back.Inputs), len(m.Nodes), len(m.Inputs))
	}
}

func TestGoldenBundled(t *testing.T) {
	for _, name := range []string{"convnet", "dynamic_batch", "two_inputs_dynamic", "external_data", "fp16", "custom_op", "control_flow"} {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, testmodels.Bundled(t, name+".onnx"), true)
		})
	}
}

func TestGoldenShared(t *testing.T) {
	for _, path := range testmodels.Shared(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			checkGolden(t, path, false)
		})
	}
}

// TestExternalDataStates checks how inspect reports external data files
// that are missing, too small, or refused.
func TestExternalDataStates(t *testing.T) {
	dir := t.TempDir()
	g := &onnxpb.GraphProto{
		Name: "ext",
		Initializer: []*onnxpb.TensorProto{
			testmodels.External("a", []int64{4}, "ok.bin", 0, 16),
			testmodels.External("b", []int64{4}, "small.bin", 0, 16),
			testmodels.External("c", []int64{4}, "missing.bin", 0, 16),
			testmodels.External("d", []int64{4}, "../escape.bin", 0, 16),
			testmodels.External("e", []int64{4}, "/abs.bin", 0, 16),
		},
		Node:   []*onnxpb.NodeProto{testmodels.Node("sum", "Sum", []string{"a", "b", "c", "d", "e"}, []string{"y"})},
		Output: []*onnxpb.ValueInfoProto{testmodels.Value("y", testmodels.F32, 4)},
	}
	noLoc := testmodels.External("f", []int64{4}, "", 0, 16)
	noLoc.ExternalData = noLoc.ExternalData[1:]
	g.Initializer = append(g.Initializer, noLoc)
	data, err := testmodels.Marshal(testmodels.Model(g))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ext.onnx")
	for name, size := range map[string]int{"ext.onnx": -1, "ok.bin": 16, "small.bin": 10} {
		b := data
		if size >= 0 {
			b = make([]byte, size)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := onnx.ReadMetadata(path)
	if err != nil {
		t.Fatal(err)
	}
	m.Path = "ext.onnx"
	var text bytes.Buffer
	if err := Text(&text, m, dir); err != nil {
		t.Fatal(err)
	}
	golden(t, "external_states.txt", text.Bytes())
	r := New(m, dir)
	var problems []string
	for _, e := range r.ExternalData {
		problems = append(problems, e.Problem)
	}
	want := []string{"", "too small", "missing", `refused: it climbs out of the model's folder with ".."`,
		"refused: it is an absolute path", `tensor "f": it has no location`}
	if strings.Join(problems, "|") != strings.Join(want, "|") {
		t.Fatalf("problems %q, want %q", problems, want)
	}
}

func TestUnknownRankInput(t *testing.T) {
	m := &onnx.Model{
		Path: "u.onnx", IRVersion: 8, Opsets: []onnx.Opset{{Version: 17}},
		Inputs:  []onnx.Value{{Name: "u", Kind: "tensor", ElemType: onnx.Float}, {Name: "s", Kind: "sequence"}},
		Outputs: []onnx.Value{{Name: "y", Kind: "tensor", ElemType: onnx.Float, Shape: []onnx.Dim{{Value: 1, Known: true}}}},
	}
	var text, js bytes.Buffer
	if err := Text(&text, m, "."); err != nil {
		t.Fatal(err)
	}
	golden(t, "unknown_rank.txt", text.Bytes())
	if err := JSON(&js, m, "."); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"shape": null`) || !strings.Contains(js.String(), `"unknown_rank": [
      "u",
      "s"
    ]`) {
		t.Fatalf("JSON does not report unknown ranks:\n%s", js.String())
	}
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

var errWrite = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errWrite
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	m, err := onnx.ReadMetadata(testmodels.Bundled(t, "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Text(&failWriter{n: 100}, m, "."); !errors.Is(err, errWrite) {
		t.Errorf("Text error = %v, want the writer's error", err)
	}
	if err := JSON(&failWriter{n: 100}, m, "."); !errors.Is(err, errWrite) {
		t.Errorf("JSON error = %v, want the writer's error", err)
	}
}

func BenchmarkInspect(b *testing.B) {
	path := testmodels.Bundled(b, "convnet.onnx")
	b.ReportAllocs()
	for b.Loop() {
		m, err := onnx.ReadMetadata(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := Text(&bytes.Buffer{}, m, filepath.Dir(path)); err != nil {
			b.Fatal(err)
		}
	}
}
