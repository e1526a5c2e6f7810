package matrix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trtbuild/trtbuild/internal/builder/buildertest"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/exitcode"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// TestMain lets the test binary be the build worker and the probe, as trtbuild is.
func TestMain(m *testing.M) { buildertest.Main(m) }

// quietRenderer counts what a build showed.
type quietRenderer struct {
	mu     sync.Mutex
	events int
	result progress.Result
}

func (r *quietRenderer) Begin(progress.View) {}
func (r *quietRenderer) Handle(b []progress.Event) {
	r.mu.Lock()
	r.events += len(b)
	r.mu.Unlock()
}
func (r *quietRenderer) Tick(time.Time)         {}
func (r *quietRenderer) Notice(progress.Notice) {}
func (r *quietRenderer) End(res progress.Result) error {
	r.mu.Lock()
	r.result = res
	r.mu.Unlock()
	return nil
}

// TestCellThroughBuilderRun runs cells of a matrix through builder.Run with the typed
// options CellOptions gives them: no command line is made or parsed on the way. The cell's
// precision, engine, report, engine cache, device and key target are fields of its options;
// the first run builds, the second is served by the engine cache.
func TestCellThroughBuilderRun(t *testing.T) {
	dir := t.TempDir()
	model, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "convnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "convnet.onnx"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "matrix.yaml")
	if err := os.WriteFile(path, []byte(`version: 1
models:
  - path: models/convnet.onnx
precisions: [fp32, fp16]
targets:
  - name: h100
    gpu: NVIDIA-H100-80GB-HBM3
    compute_capability: "9.0"
build_flags: ["--opt-level", "3"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	base := builder.DefaultOptions()
	base.OptLevel = 3 // what build_flags say, as the command line's flag set reads them
	base.NoTimingCache = true
	var got []builder.Options
	var renderers []*quietRenderer
	run := RunOptions{
		Base: base, Backend: "sim", SimSpeed: 1000, EngineCacheSize: "1G",
		Build: func(dev int, sigs <-chan os.Signal, o builder.Options) error {
			got = append(got, o)
			r := &quietRenderer{}
			renderers = append(renderers, r)
			_, err := builder.Run(context.Background(), o, builder.Frontend{
				NewRenderer: func(progress.Controls) progress.Renderer { return r },
				Signals:     sigs,
			})
			return err
		},
	}
	cells := f.Cells()
	if len(cells) != 2 {
		t.Fatalf("%d cells, want 2", len(cells))
	}
	for round, want := range []string{StatusBuilt, StatusCached} {
		for _, c := range cells {
			entry, err := RunCell(f, c, run, 0, nil, c.Engine()+".report.json")
			if err != nil {
				t.Fatalf("round %d, cell %s: %v", round, c.ID(), err)
			}
			if entry.Status != want || entry.Key == "" || entry.Engine != c.Engine() {
				t.Errorf("round %d, cell %s: %+v, want %s with a key", round, c.ID(), entry, want)
			}
		}
	}
	for i, o := range got {
		c := cells[i%2]
		if o.FP16 != (c.Precision == "fp16") || o.OptLevel != 3 || o.Backend != "sim" || !o.OwnOutputs ||
			o.Engine != filepath.Join(f.OutputDir(), c.Engine()) || o.Report != filepath.Join(f.OutputDir(), c.Engine()+".report.json") ||
			o.EngineCache.Dir != f.CacheDir() || o.KeyTarget == nil || o.KeyTarget.GPU != c.Target.GPU || o.Sim.Speed != 1000 {
			t.Errorf("build %d (cell %s) options: %+v", i, c.ID(), o)
		}
	}
	if renderers[0].events == 0 || renderers[0].result.Status != progress.StatusBuilt {
		t.Errorf("the first build showed %d events, result %+v", renderers[0].events, renderers[0].result)
	}
	m, err := manifest.Read(manifest.Path(filepath.Join(f.OutputDir(), cells[1].Engine())))
	if err != nil || m.Precision != "fp16" || m.Parts.GPU != cells[1].Target.GPU {
		t.Errorf("fp16 cell's manifest %+v, %v", m, err)
	}
}

// TestCheckTargetWithoutTensorRT: the target check of a TensorRT cell asks the probe, which
// a binary without TensorRT cannot run; it says so, with the fix, and does not answer for a
// GPU it never asked about.
func TestCheckTargetWithoutTensorRT(t *testing.T) {
	err := CheckTarget("tensorrt", Target{Name: "h100", GPU: "NVIDIA-H100-80GB-HBM3"}, 0, "")
	if err == nil {
		t.Skip("this binary has the TensorRT backend and found a GPU of the target's type")
	}
	var e *exitcode.Error
	if !errors.As(err, &e) || strings.Contains(err.Error(), "not loaded") {
		t.Errorf("CheckTarget: %v", err)
	}
	if CheckTarget("sim", Target{GPU: "x"}, 0, "") != nil {
		t.Error("a simulated cell's target needs no GPU")
	}
}
