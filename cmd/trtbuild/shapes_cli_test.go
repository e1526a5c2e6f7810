package main

import (
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
