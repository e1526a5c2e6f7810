//go:build !windows

package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// TestTargetCheckLoadsTensorRT: the target check asks the probe, a child that loads TensorRT
// (here stand-in libraries of the newest TensorRT compiled for and a CUDA driver with one
// GPU, "Stand-in GPU"): a target of that GPU type passes, another is refused by name, and a
// cell of it reaches the builder, whose stand-in makes no builder. Before the probe, the
// parent asked a TensorRT it never loads, and every cell answered "not loaded".
func TestTargetCheckLoadsTensorRT(t *testing.T) {
	c := cgo.CompiledShims()[0]
	lib := standin.Build(t, t.TempDir(), standin.Set(c.TensorRT, c.Build)...)
	t.Setenv("TRTBUILD_TENSORRT_LIB", lib)
	here := Target{Name: "standin", GPU: GPULabel("Stand-in GPU"), ComputeCapability: "9.0"}
	if err := CheckTarget("tensorrt", here, 0, lib); err != nil {
		t.Fatalf("CheckTarget of the GPU that is here: %v", err)
	}
	other := Target{Name: "h100", GPU: "NVIDIA-H100-80GB-HBM3"}
	err := CheckTarget("tensorrt", other, 0, lib)
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "GPU 0 is "+here.GPU+", but target h100 is NVIDIA-H100-80GB-HBM3") {
		t.Fatalf("CheckTarget of another GPU type: %v", err)
	}

	dir := t.TempDir()
	model, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "convnet.onnx"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "matrix.yaml")
	if err := os.WriteFile(path, []byte("version: 1\nmodels:\n  - path: convnet.onnx\nprecisions: [fp32]\ntargets:\n  - name: standin\n    gpu: "+here.GPU+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base := builder.DefaultOptions()
	base.NoTimingCache, base.NoBuiltinPlugins, base.TensorRTLib = true, true, lib
	reached := false
	run := RunOptions{Base: base, Backend: "tensorrt", SimSpeed: 1, EngineCacheSize: "1G",
		Build: func(dev int, sigs <-chan os.Signal, o builder.Options) error {
			reached = true
			_, err := builder.Run(context.Background(), o, builder.Frontend{
				NewRenderer: func(progress.Controls) progress.Renderer { return &quietRenderer{} },
			})
			return err
		}}
	cell := f.Cells()[0]
	if err := CheckTarget(run.Backend, cell.Target, 0, base.TensorRTLib); err != nil {
		t.Fatalf("the cell's target: %v", err)
	}
	entry, err := RunCell(f, cell, run, 0, nil, "")
	if !reached || err == nil || entry.Status != StatusFailed || strings.Contains(entry.Error, "not loaded") {
		t.Fatalf("the cell did not reach the builder: reached %v, %+v, %v", reached, entry, err)
	}
	t.Logf("the stand-in's build ends as expected: %s", entry.Error)
}
