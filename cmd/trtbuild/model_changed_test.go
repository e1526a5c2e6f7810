package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestModelChangedDuringBuild: the model is opened once; the key and the preflight read what
// was opened, and the worker reads the model by its path. When the path no longer leads to
// that file, unchanged, at the end of the build (another file renamed over it, written in
// place, or swapped and put back), the engine may be of another model: nothing is kept, the
// build fails in one line, and the engine cache gets nothing. The old code put such an engine
// in place and stored it under the first model's key.
func TestModelChangedDuringBuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, model, other string)
		why    string
	}{
		{"another model renamed over it", func(t *testing.T, model, other string) {
			if err := os.Rename(other, model); err != nil {
				t.Fatal(err)
			}
		}, "its name leads to another file now"},
		{"written in place", func(t *testing.T, model, _ string) {
			f, err := os.OpenFile(model, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{0})
			f.Close()
		}, "it was written to, renamed or linked"},
		{"swapped and put back", func(t *testing.T, model, other string) {
			if err := os.Link(model, model+".keep"); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, model); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(model+".keep", model); err != nil {
				t.Fatal(err)
			}
		}, "it was written to, renamed or linked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			dir := filepath.Dir(model)
			other := filepath.Join(dir, "other.onnx")
			data, err := os.ReadFile(repoModel(t, "control_flow.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(other, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(t.TempDir(), "engines")
			cmd, errOut, out := startBuild(t, "--backend", "sim", "--sim-speed", "4", "--no-timing-cache", "--engine-cache", cache, model)
			tc.change(t, model, other)
			if code := waitExit(t, cmd, 2*time.Minute); code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s\nstdout: %s", code, errOut, out)
			}
			if !strings.Contains(out.String(), tc.why) || !strings.Contains(out.String(), "so it was not kept") {
				t.Errorf("the output does not say the model changed (%q):\n%s", tc.why, out)
			}
			for _, name := range []string{"convnet.engine", "convnet.engine.json"} {
				if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
					t.Errorf("%s was written: %v", name, err)
				}
			}
			assertNoTempFiles(t, dir)
			entries, _ := filepath.Glob(filepath.Join(cache, "*", "*"))
			for _, e := range entries {
				if !strings.HasPrefix(filepath.Base(e), ".") && !strings.HasSuffix(e, ".lock") {
					t.Errorf("the engine cache holds %s", e)
				}
			}
		})
	}
}
