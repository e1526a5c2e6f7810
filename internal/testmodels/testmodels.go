// Package testmodels finds the ONNX models that tests read: the ones bundled
// in the repository's testdata/models folder and, when present, the shared
// real models in ../shared/models beside the repository.
package testmodels

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// RepoRoot returns the repository root: the nearest folder above the test's
// working directory that holds go.mod. It fails the test when there is none.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("finding the repository root: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// BundledDir returns the repository's testdata/models folder.
func BundledDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(RepoRoot(tb), "testdata", "models")
}

// Bundled returns the path of the bundled model file name.
func Bundled(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(BundledDir(tb), name)
}

// Shared returns the sorted paths of the .onnx files in ../shared/models
// relative to the repository root. It skips the test when that folder does
// not exist or holds no models, as in a fresh clone.
func Shared(tb testing.TB) []string {
	tb.Helper()
	dir := filepath.Join(RepoRoot(tb), "..", "shared", "models")
	paths, err := filepath.Glob(filepath.Join(dir, "*.onnx"))
	if err != nil {
		tb.Fatalf("listing shared models: %v", err)
	}
	if len(paths) == 0 {
		tb.Skipf("no shared models in %s", dir)
	}
	sort.Strings(paths)
	return paths
}
