// Package goldenfile compares test output with golden files; `go test -update` rewrites them.
// Every package's tests share it, and one -update flag.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	// The -update flag is registered by charmbracelet's golden package, which teatest (the live
	// view's tests) imports; a second registration would panic, so every package uses that one.
	_ "github.com/charmbracelet/x/exp/golden"
)

// Updating reports whether the run was asked to rewrite golden files (go test -update).
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Check compares got with the golden file at path. With -update it writes got there instead
// (creating folders as needed), so a reviewed change of output is one command away.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (if the change is intended, go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
