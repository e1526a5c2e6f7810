package onnx

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/testmodels"
)

// TestGeneratorIsDeterministic runs the generator of testdata/models into a
// temporary folder and requires exactly the committed files, byte for byte.
// When it fails after a change to the generator, run
// `go run ./testdata/models/gen` and commit the result.
func TestGeneratorIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	root := testmodels.RepoRoot(t)
	out := t.TempDir()
	cmd := exec.Command(goTool, "run", "./testdata/models/gen", "-out", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./testdata/models/gen: %v\n%s", err, b)
	}
	committed := listFiles(t, testmodels.BundledDir(t))
	generated := listFiles(t, out)
	if len(committed) != len(generated) {
		t.Fatalf("generator writes %q, testdata/models holds %q", generated, committed)
	}
	for i, name := range generated {
		if committed[i] != name {
			t.Fatalf("generator writes %q, testdata/models holds %q", generated, committed)
		}
		want, err := os.ReadFile(filepath.Join(testmodels.BundledDir(t), name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; run go run ./testdata/models/gen", name)
		}
	}
}

// listFiles returns the sorted names of the model files (.onnx and .bin) in
// dir.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".onnx") || strings.HasSuffix(e.Name(), ".bin")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}
