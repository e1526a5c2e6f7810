package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// complete runs `trtbuild __complete ARGS…` (what the shell scripts of `trtbuild completion`
// run) in dir and returns the completions, without descriptions, and the directive.
func complete(t *testing.T, dir string, args ...string) ([]string, int) {
	t.Helper()
	r := trtbuildIn(t, dir, append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %q: exit %d\nstderr: %s", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	directive, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if err != nil || !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %q: no directive line in\n%s", args, r.stdout)
	}
	var comps []string
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, "_activeHelp_") {
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		comps = append(comps, name)
	}
	return comps, directive
}

// Cobra's directive bits.
const (
	compNoSpace    = 2
	compNoFileComp = 4
)

func TestCompletion(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	dir := t.TempDir()
	for _, p := range []string{"models/sub", "models/.hidden"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "bert_tiny.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"models/bert.onnx", "models/Other.ONNX", "models/notes.txt", "top.onnx"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		args      []string
		want      []string
		directive int
	}{
		{"first argument: subcommands, models and folders", []string{""},
			[]string{"completion", "convert", "engine", "help", "inspect", "key", "matrix", "mcp", "replay", "report", "serve", "version", "models/", "top.onnx"}, compNoFileComp | compNoSpace},
		{"models in a folder", []string{"models/"}, []string{"models/Other.ONNX", "models/bert.onnx", "models/sub/"}, compNoFileComp | compNoSpace},
		{"a model by prefix", []string{"models/b"}, []string{"models/bert.onnx"}, compNoFileComp},
		{"only one model", []string{"top.onnx", ""}, nil, compNoFileComp},
		{"--onnx", []string{"--onnx", "t"}, []string{"top.onnx"}, compNoFileComp},
		{"--progress", []string{"top.onnx", "--progress", ""}, []string{"auto", "tty", "plain", "json", "quiet"}, compNoFileComp},
		{"--backend", []string{"--backend", "s"}, []string{"sim"}, compNoFileComp},
		{"--hardware-compat", []string{"--hardware-compat", ""}, []string{"none", "ampere+", "same-compute-capability"}, compNoFileComp},
		{"--profilingVerbosity", []string{"--profilingVerbosity", "d"}, []string{"detailed"}, compNoFileComp},
		{"--sim-scenario", []string{"--sim-scenario", ""}, []string{"crash", "fail", "silence", "slow-cancel"}, compNoFileComp},
		{"--tacticSources list", []string{"--tacticSources=-CUDNN,+CUBLAS"}, []string{"-CUDNN,+CUBLAS", "-CUDNN,+CUBLAS_LT"}, compNoFileComp | compNoSpace},
		{"--memPoolSize", []string{"--memPoolSize", "t"}, []string{"tacticSharedMem:"}, compNoFileComp | compNoSpace},
		{"input names", []string{"top.onnx", "--shapes", ""}, []string{"input_ids:", "attention_mask:", "token_type_ids:"}, compNoFileComp | compNoSpace},
		{"input names from --onnx", []string{"--onnx", "top.onnx", "--min-shapes", "tok"}, []string{"token_type_ids:"}, compNoFileComp | compNoSpace},
		{"next input name", []string{"top.onnx", "--opt-shapes", "input_ids:8x128,"}, []string{"input_ids:8x128,attention_mask:", "input_ids:8x128,token_type_ids:"}, compNoFileComp | compNoSpace},
		{"example dims", []string{"top.onnx", "--max-shapes", "input_ids:8x128,attention_mask:"}, []string{"input_ids:8x128,attention_mask:16x512"}, compNoFileComp | compNoSpace},
		{"trtexec spelling", []string{"top.onnx", "--minShapes", "input_ids:"}, []string{"input_ids:1x1"}, compNoFileComp | compNoSpace},
		{"no model yet", []string{"--shapes", ""}, nil, compNoFileComp | compNoSpace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive := complete(t, dir, tt.args...)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("completions %q, want %q", got, tt.want)
			}
			if directive != tt.directive {
				t.Errorf("directive %d, want %d", directive, tt.directive)
			}
		})
	}
}

// TestCompletionScripts checks that the completion scripts docs/usage.md ("Shell completion")
// tells users to install are written.
func TestCompletionScripts(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := trtbuild(t, nil, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes\nstderr: %s", shell, r.code, len(r.stdout), r.stderr)
		}
	}
}

// trtbuildIn runs trtbuild in dir.
func trtbuildIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = testEnv(t)
	return runResult(t, cmd)
}
