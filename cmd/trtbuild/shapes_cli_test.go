package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSharedDimsCLI(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "bert_tiny.onnx")
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "50", "--progress", "quiet", model, "--shapes", "input_ids:1x128")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	want := `trtbuild: warning: input "attention_mask" has no shape; using 1x128, from the dimensions it shares with "input_ids" (batch, seq)`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks\n  %s\ngot\n%s", want, r.stderr)
	}

	r = trtbuild(t, nil, "--backend", "sim", "--progress", "quiet", model, "--shapes", "input_ids:1x128,attention_mask:2x64")
	want = `trtbuild: --shapes input_ids:1x128,attention_mask:2x64: inputs "input_ids" and "attention_mask" share the dimension "batch" but are given 1 and 2; ` +
		`give every input the same batch, as in --shapes input_ids:1x128,attention_mask:1x128` + "\n"
	if r.code != 2 || r.stderr != want || r.stdout != "" {
		t.Errorf("mismatch: exit %d, want 2\nstderr: %q\nwant:   %q\nstdout: %q", r.code, r.stderr, want, r.stdout)
	}
}

// TestImpossibleShapesCLI: a shape TensorRT cannot build for is refused before anything starts,
// with exit status 2, one line, and nothing written beside the model; `inspect --check` says the
// same line as its refusal.
func TestImpossibleShapesCLI(t *testing.T) {
	t.Parallel() // real subprocesses in their own folders, cache and HOME
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"batch 0", []string{"--shapes", "images:0x3x64x64"},
			`input "images": the shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; give sizes of 1 or more`},
		{"batch 2^63-1", []string{"--shapes", "images:9223372036854775807x3x64x64"},
			`input "images": the shape 9223372036854775807x3x64x64 is more than 2^63-1 elements, more than TensorRT's 64-bit sizes can count; check the shape flags for a typo`},
		{"max 0", []string{"--min-shapes", "images:0x3x64x64", "--opt-shapes", "images:0x3x64x64", "--max-shapes", "images:0x3x64x64"},
			`input "images": the shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; give sizes of 1 or more`},
		{"the second profile's opt 0", []string{"--shapes", "images:1x3x64x64", "--profile", "1",
			"--min-shapes", "images:0x3x64x64", "--opt-shapes", "images:0x3x64x64", "--max-shapes", "images:8x3x64x64"},
			`profile 1: input "images": the opt shape 0x3x64x64 gives dimension 0 (the batch) the size 0, an empty tensor, which leaves TensorRT nothing to build for; ` +
				`give opt and max sizes of 1 or more (only min may be 0, for an engine that also takes empty inputs)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := repoModel(t, "dynamic_batch.onnx")
			r := trtbuild(t, nil, append([]string{"--backend", "sim", "--progress", "plain", model}, tt.flags...)...)
			if r.code != 2 || r.stderr != "trtbuild: "+tt.want+"\n" || r.stdout != "" {
				t.Errorf("exit %d, want 2\nstderr: %q\nwant:   %q\nstdout: %q", r.code, r.stderr, "trtbuild: "+tt.want+"\n", r.stdout)
			}
			entries, err := os.ReadDir(filepath.Dir(model))
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("the model's folder holds %q, want only the model: no engine, no manifest", names)
			}
			r = trtbuild(t, nil, append([]string{"inspect", "--check", model}, tt.flags...)...)
			if r.code != 1 || r.stdout != "refused: "+tt.want+"\n" {
				t.Errorf("inspect --check: exit %d, want 1\nstdout: %q\nwant:   %q", r.code, r.stdout, "refused: "+tt.want+"\n")
			}
		})
	}
}
