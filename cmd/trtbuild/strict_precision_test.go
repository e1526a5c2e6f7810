package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An opset-17 model converted to bfloat16 keeps its Conv and pooling nodes in float32: convert
// says so before it writes, and --strict-precision refuses instead, writing nothing and leaving
// an existing output as it was. A simulated --bf16 build, which converts the model as a
// TensorRT 11 build does, says the same.
func TestStrictPrecision(t *testing.T) {
	t.Parallel()
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	headline := "9 of 24 nodes stay float32, 8 of them because opset 17 has no bfloat16 Conv, GlobalAveragePool or MaxPool: re-export with opset 22"
	existing := filepath.Join(dir, "old.onnx")
	if err := os.WriteFile(existing, []byte("an older conversion"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		output string // the file written, "" for none
	}{
		{"refused", []string{"convert", "--bf16", "--strict-precision", model}, 2, "trtbuild: --strict-precision: " + headline, ""},
		{"refused with --json", []string{"convert", "--bf16", "--strict-precision", "--json", model}, 2, "nothing written", ""},
		{"an existing output is untouched", []string{"convert", "--bf16", "--strict-precision", model, "-o", existing}, 2, headline, ""},
		{"without it, a warning first", []string{"convert", "--bf16", model}, 0, "trtbuild: warning: " + headline, filepath.Join(dir, "convnet.bf16.onnx")},
		{"fp16 needs nothing newer", []string{"convert", "--fp16", "--strict-precision", model}, 0, "", filepath.Join(dir, "convnet.fp16.onnx")},
	}
	for _, tt := range tests {
		r := trtbuild(t, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
			t.Fatalf("%s: exit %d, want %d; stderr %q lacks %q", tt.name, r.code, tt.code, r.stderr, tt.stderr)
		}
		if tt.code != 0 && (r.stdout != "" || strings.Count(r.stderr, "\n") != 1) {
			t.Errorf("%s: a refusal is one line on stderr; got %q and %q", tt.name, r.stdout, r.stderr)
		}
		if tt.output != "" {
			if _, err := os.Stat(tt.output); err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			os.Remove(tt.output)
		}
		entries, _ := os.ReadDir(dir)
		if tt.output == "" && len(entries) != 2 {
			t.Errorf("%s: the folder holds %d files, want the model and old.onnx only", tt.name, len(entries))
		}
		assertUnchanged(t, existing, "an older conversion")
	}
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "50", "--progress", "plain", "--bf16", model, "-o", os.DevNull)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "WARNING: TensorRT 11.1.0 has no bf16 builder flag: converted the ONNX graph to bf16 first") ||
		!strings.Contains(r.stdout+r.stderr, "WARNING: "+headline) {
		t.Fatalf("simulated --bf16 build: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
