package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// inspectRun runs trtbuild in-process with args and returns its exit code,
// stdout and stderr.
func inspectRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &streams{Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
	return code, out.String(), errOut.String()
}

func TestInspect(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	models := filepath.Join("..", "..", "testdata", "models")
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // substring
		stderr  string // substring
		jsonDoc bool
	}{
		{"text", []string{"inspect", filepath.Join(models, "convnet.onnx")}, 0,
			"Inputs\n  images  float32  1 x 3 x 224 x 224\n", "", false},
		{"dynamic shows the flags", []string{"inspect", filepath.Join(models, "dynamic_batch.onnx")}, 0,
			"  --min-shapes images:1x3x64x64 --opt-shapes images:8x3x64x64 --max-shapes images:16x3x64x64\n", "", false},
		{"json", []string{"inspect", "--json", filepath.Join(models, "two_inputs_dynamic.onnx")}, 0,
			`"graph": "two_inputs_dynamic"`, "", true},
		{"truncated", []string{"inspect", filepath.Join(models, "truncated.onnx")}, 2,
			"", "truncated.onnx is truncated (", false},
		{"random bytes", []string{"inspect", filepath.Join(models, "random_bytes.onnx")}, 2,
			"", "random_bytes.onnx is not an ONNX model (", false},
		{"wrong magic", []string{"inspect", filepath.Join(models, "wrong_magic.onnx")}, 2,
			"", "wrong_magic.onnx is not an ONNX model (it is a PNG image)", false},
		{"bomb", []string{"inspect", "--json", filepath.Join(models, "nested_length_bomb.onnx")}, 2,
			"", "nested more than 100 messages deep", false},
		{"missing", []string{"inspect", filepath.Join(models, "nope.onnx")}, 2, "", "does not exist; check the path", false},
		{"no model", []string{"inspect"}, 2, "", "inspect takes one model file, got 0 arguments", false},
		{"two models", []string{"inspect", "a.onnx", "b.onnx"}, 2, "", "got 2 arguments", false},
		{"bad flag", []string{"inspect", "--jsn", "a.onnx"}, 2, "", "unknown flag: --jsn", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := inspectRun(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if tt.code != 0 && (stdout != "" || strings.Count(stderr, "\n") != 1) {
				t.Errorf("a failure must print one line to stderr and nothing to stdout; got %q and %q", stdout, stderr)
			}
			if tt.jsonDoc {
				var doc map[string]any
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("--json output is not JSON: %v", err)
				}
			}
		})
	}
}
