package main

import (
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
)

// TestTargetProbeWithoutTensorRT: the probe that loads TensorRT for a build key runs in its
// own process and, where TensorRT cannot be loaded (here: the folder it is told holds TensorRT
// has none), fails with one line that says why, so the parent of a build never loads TensorRT
// itself.
func TestTargetProbeWithoutTensorRT(t *testing.T) {
	r := trtbuild(t, []string{"TRTBUILD_TENSORRT_LIB=" + t.TempDir(), "TENSORRT_ROOT="}, builder.ProbeSubcommand)
	if r.code == 0 {
		t.Fatalf("%s exited 0 without TensorRT:\n%s", builder.ProbeSubcommand, r.stdout)
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "TensorRT") {
		t.Errorf("stderr should be one line naming TensorRT; got:\n%s", r.stderr)
	}
}
