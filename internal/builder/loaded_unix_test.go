//go:build !windows

package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/manifest"
	"github.com/trtbuild/trtbuild/internal/probe"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// TestWorkerSaysWhatItLoaded: a TensorRT build without an engine cache (here over stand-in
// libraries of the newest TensorRT the binary drives and a driver of one GPU) is keyed by what
// its worker says it loaded, in its first event: no probe child runs beside it, its manifest
// has the key, the plan's Env remembers the target (Plan.Key asks nothing), and a probe asked
// afterwards finds the same key.
func TestWorkerSaysWhatItLoaded(t *testing.T) {
	c := cgo.CompiledShims()[len(cgo.CompiledShims())-1]
	lib := standin.Build(t, t.TempDir(), standin.Loading(c.TensorRT, c.Build, 90, "Stand-in GPU")...)
	t.Setenv("TRTBUILD_TENSORRT_LIB", lib)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	o := DefaultOptions()
	o.Model, o.Engine, o.Backend = filepath.Join("..", "..", "testdata", "models", "convnet.onnx"), filepath.Join(dir, "convnet.engine"), "tensorrt"
	o.NoTimingCache = true
	asked := 0
	env := NewEnvWith(func(backend string, device int, libDir string) (buildkey.Target, error) {
		asked++
		return probe.Target(backend, device, libDir)
	})
	p, err := Prepare(o, env)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var saw []progress.EventType
	view := &recording{seen: &saw}
	res, err := p.Start(context.Background(), Frontend{NewRenderer: func(progress.Controls) progress.Renderer { return view }}).Wait()
	if err != nil || res.Status != progress.StatusBuilt {
		t.Fatalf("the build over the stand-in: %+v, %v", res, err)
	}
	for _, typ := range saw {
		if typ == progress.EventBuild {
			t.Error("the worker's build event reached the view")
		}
	}
	data, err := os.ReadFile(manifest.Path(o.Engine))
	if err != nil {
		t.Fatalf("no manifest: %v", err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if asked != 0 {
		t.Fatalf("the build asked a probe %d times; want none (the worker said what it loaded)", asked)
	}
	if m.Parts.GPU != "Stand-in GPU" || m.Parts.ONNXParser == "" || m.Parts.TensorRT == "" {
		t.Fatalf("the manifest's target: %+v", m.Parts)
	}
	k, err := p.Key()
	if err != nil || k.Key != m.Key || asked != 0 {
		t.Fatalf("the plan's key %s (%v, %d probes); the manifest's %s", k.Key, err, asked, m.Key)
	}
	fresh, err := Prepare(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if k, err := fresh.Key(); err != nil || k.Key != m.Key {
		t.Fatalf("a probe's key %s (%v); the worker's %s", k.Key, err, m.Key)
	}
}

// recording is a renderer that notes the types of the events it is shown.
type recording struct {
	progress.Discard
	seen *[]progress.EventType
}

func (r *recording) Handle(batch []progress.Event) {
	for _, e := range batch {
		*r.seen = append(*r.seen, e.Type)
	}
}

// TestWorkerCorrectsAStaleTarget: with an engine cache, a build is keyed before it starts, by
// its Env's answer; when that answer is stale (here an Env that still says "Old GPU", as after
// the GPU was swapped or TensorRT upgraded in place within TargetAge), the worker's word wins:
// the manifest and the cache entry name what built the engine, a warning says so, and the Env
// keeps the worker's target.
func TestWorkerCorrectsAStaleTarget(t *testing.T) {
	c := cgo.CompiledShims()[len(cgo.CompiledShims())-1]
	lib := standin.Build(t, t.TempDir(), standin.Loading(c.TensorRT, c.Build, 90, "Stand-in GPU")...)
	t.Setenv("TRTBUILD_TENSORRT_LIB", lib)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	o := DefaultOptions()
	o.Model, o.Engine, o.Backend = filepath.Join("..", "..", "testdata", "models", "convnet.onnx"), filepath.Join(dir, "convnet.engine"), "tensorrt"
	o.NoTimingCache = true
	o.EngineCache = EngineCache{Dir: filepath.Join(dir, "cache"), Size: "1G", Trust: "self"}
	real, err := probe.Target("tensorrt", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	stale := real
	stale.GPU = "Old GPU"
	env := NewEnvWith(func(string, int, string) (buildkey.Target, error) { return stale, nil })
	p, err := Prepare(o, env)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var diag strings.Builder
	h := p.Start(context.Background(), Frontend{Diagnostics: &diag})
	res, err := h.Wait()
	if err != nil || res.Status != progress.StatusBuilt {
		t.Fatalf("the build: %+v, %v", res, err)
	}
	data, err := os.ReadFile(manifest.Path(o.Engine))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Parts.GPU != "Stand-in GPU" || !strings.Contains(diag.String(), "but its worker loaded") {
		t.Fatalf("the manifest names %q; diagnostics:\n%s", m.Parts.GPU, diag.String())
	}
	if h.Key() != m.Key {
		t.Fatalf("the handle says the engine's key is %s, the manifest %s", h.Key(), m.Key)
	}
	if k, err := p.Key(); err != nil || k.Key != m.Key {
		t.Fatalf("the plan's key after the build %s (%v), the manifest's %s: the Env did not keep the worker's target", k.Key, err, m.Key)
	}
	// The cache has the engine under the key of what built it.
	again, err := Prepare(o, NewEnv())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	hit, err := again.Lookup(context.Background(), Frontend{}).Wait()
	if err != nil || !hit.Cached {
		t.Fatalf("a lookup with the machine's own target: %+v, %v; want the hit stored under the worker's key", hit, err)
	}
}
