//go:build !windows

package service

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trtbuild/trtbuild/internal/builder"
	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/cgo"
	"github.com/trtbuild/trtbuild/internal/cgo/standin"
	"github.com/trtbuild/trtbuild/internal/probe"
	"github.com/trtbuild/trtbuild/internal/progress"
)

// twoGPUs is a stand-in TensorRT (the newest the binary drives) whose CUDA driver has two GPUs
// of different types, device 0 "Stand-in GPU A" and device 1 "Stand-in GPU B", as the builds'
// TensorRT (TRTBUILD_TENSORRT_LIB, inherited by the probe and the workers).
func twoGPUs(t *testing.T) {
	t.Helper()
	c := cgo.CompiledShims()[len(cgo.CompiledShims())-1]
	libs := standin.Loading(c.TensorRT, c.Build, 90, "unused")
	libs[len(libs)-1] = standin.Drivers(
		standin.GPU{Name: "Stand-in GPU A", CCMajor: 9, CCMinor: 0, SMs: 132},
		standin.GPU{Name: "Stand-in GPU B", CCMajor: 9, CCMinor: 0, SMs: 114})
	t.Setenv("TRTBUILD_TENSORRT_LIB", standin.Build(t, t.TempDir(), libs...))
}

// onTensorRT are the options of a build over the stand-in TensorRT.
const onTensorRT = `{"backend": "tensorrt", "no-timing-cache": true}`

// engineGPU is the GPU the manifest of build id's engine names, and the manifest's key.
func engineGPU(t *testing.T, m *Manager, id string) (gpu, key string) {
	t.Helper()
	f, read, err := m.EngineWithManifest(id)
	if err != nil {
		t.Fatalf("build %s's engine: %v", id, err)
	}
	f.Close()
	mf, err := read()
	if err != nil {
		t.Fatalf("build %s's manifest: %v", id, err)
	}
	return mf.Parts.GPU, mf.Key
}

// cached says whether s's result is an engine cache hit.
func cached(t *testing.T, s Snapshot) bool {
	t.Helper()
	var res progress.Result
	if err := json.Unmarshal(s.Result, &res); err != nil {
		t.Fatalf("build %s's result %s: %v", s.ID, s.Result, err)
	}
	return res.Cached
}

// TestKeysFollowTheGPUThatBuilds: on a server whose GPUs are of two types, a build's key, its
// sharing and its engine cache hits are those of the GPU that builds it (or of the engine the
// cache had), never device 0's: a server that builds on device 1 only keys by GPU B, as the
// manifest of the engine it built says; one that builds on device 0 does not take GPU B's
// engine from the cache, and builds its own; one that serves both answers from the cache
// under the first type's key. Each submission is planned once, and each GPU's target asked of
// the machine once for the server's life.
func TestKeysFollowTheGPUThatBuilds(t *testing.T) {
	twoGPUs(t)
	e := newEnv(t)
	cache := builder.EngineCache{Dir: filepath.Join(t.TempDir(), "engines"), Size: "1G", Trust: "self"}
	submit := func(m *Manager) Snapshot {
		t.Helper()
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, onTensorRT)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Device 1 only: GPU B builds, and the key is GPU B's.
	envB := builder.NewEnv()
	onB := e.manager(t, func(c *Config) { c.GPUs, c.EngineCache, c.Env = []int{1}, cache, envB })
	first := submit(onB)
	end := wait(t, onB, first.ID)
	if end.State != StateSucceeded || cached(t, end) {
		t.Fatalf("the build on GPU B: %+v", end)
	}
	gpu, key := engineGPU(t, onB, first.ID)
	if gpu != "Stand-in GPU B" || key != end.Key || first.Key != end.Key {
		t.Fatalf("built on GPU B: the manifest names %q with key %s; the build was submitted with key %s and ended with %s", gpu, key, first.Key, end.Key)
	}
	again := wait(t, onB, submit(onB).ID)
	if again.State != StateSucceeded || !cached(t, again) || again.Key != key {
		t.Fatalf("the same build on GPU B again is not GPU B's cache hit: %+v", again)
	}
	if c := envB.Counts(); c.Plans != 2 || c.Probes != 1 {
		t.Fatalf("two submissions on one GPU: %d plannings and %d probes, want 2 and 1", c.Plans, c.Probes)
	}
	onB.Shutdown(t.Context())
	onB.Close()

	// Device 0 only: GPU B's engine is not GPU A's; it builds its own.
	e.state = filepath.Join(t.TempDir(), "state")
	onA := e.manager(t, func(c *Config) { c.GPUs, c.EngineCache = []int{0}, cache })
	built := wait(t, onA, submit(onA).ID)
	if built.State != StateSucceeded || cached(t, built) || built.Key == key {
		t.Fatalf("the build on GPU A took GPU B's engine, or failed: %+v", built)
	}
	if gpu, k := engineGPU(t, onA, built.ID); gpu != "Stand-in GPU A" || k != built.Key {
		t.Fatalf("built on GPU A: the manifest names %q with key %s, the build says %s", gpu, k, built.Key)
	}
	onA.Shutdown(t.Context())
	onA.Close()

	// Both, device 1 first: a hit under GPU B's key; two submissions, two plannings, and one
	// probe per GPU.
	e.state = filepath.Join(t.TempDir(), "state")
	envBoth := builder.NewEnv()
	both := e.manager(t, func(c *Config) { c.GPUs, c.EngineCache, c.Env = []int{1, 0}, cache, envBoth })
	hit := wait(t, both, submit(both).ID)
	if hit.State != StateSucceeded || !cached(t, hit) || hit.Key != key {
		t.Fatalf("a server of both GPUs, GPU B first: %+v, want GPU B's hit (key %s)", hit, key)
	}
	hit2 := wait(t, both, submit(both).ID)
	if !cached(t, hit2) || hit2.Key != key {
		t.Fatalf("again: %+v", hit2)
	}
	if c := envBoth.Counts(); c.Plans != 2 || c.Probes != 2 {
		t.Fatalf("two submissions on two GPUs: %d plannings and %d probes, want 2 and 2", c.Plans, c.Probes)
	}
}

// TestSharingKeysByTheGPUThatBuilds: with an empty engine cache, on a server of two GPU types,
// two submissions of one build share one run, built on the first free GPU (device 1, listed
// first): both get its engine and its key, which its manifest names; before the run had a GPU,
// neither knew its key (it depends on the GPU).
func TestSharingKeysByTheGPUThatBuilds(t *testing.T) {
	twoGPUs(t)
	e := newEnv(t)
	env := builder.NewEnv()
	m := e.manager(t, func(c *Config) { c.GPUs, c.Env = []int{1, 0}, env })
	var ids []string
	for range 2 {
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, onTensorRT)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	a, b := wait(t, m, ids[0]), wait(t, m, ids[1])
	if a.State != StateSucceeded || b.State != StateSucceeded || a.Key == "" || a.Key != b.Key {
		t.Fatalf("the two builds: %+v and %+v", a, b)
	}
	for _, id := range ids {
		if gpu, key := engineGPU(t, m, id); gpu != "Stand-in GPU B" || key != a.Key {
			t.Fatalf("build %s's manifest names %q with key %s, want GPU B's, key %s", id, gpu, key, a.Key)
		}
	}
	isPrefix(t, m, ids[0], ids[1])
	if c := env.Counts(); c.Plans != 2 || c.Probes != 2 {
		t.Fatalf("two submissions on two GPUs: %d plannings and %d probes, want 2 and 2", c.Plans, c.Probes)
	}
}

// TestAGPUThatCannotSayWhatItIs: of a server's GPUs, one whose probe fails (here device 5 of a
// driver with two) builds nothing, and the server says so in its log; a submission builds on the
// others. Only when no GPU answers is a submission refused.
func TestAGPUThatCannotSayWhatItIs(t *testing.T) {
	twoGPUs(t)
	e := newEnv(t)
	var log strings.Builder
	var mu sync.Mutex
	m := e.manager(t, func(c *Config) { c.GPUs, c.Log = []int{5, 1}, lockedWriter{&mu, &log} })
	s := wait(t, m, submitOn(t, m).ID)
	if s.State != StateSucceeded {
		t.Fatalf("a build on a server with one broken GPU: %+v", s)
	}
	if gpu, _ := engineGPU(t, m, s.ID); gpu != "Stand-in GPU B" {
		t.Fatalf("built on %q, want GPU B (device 1)", gpu)
	}
	mu.Lock()
	said := log.String()
	mu.Unlock()
	if !strings.Contains(said, "GPU 5: ") || !strings.Contains(said, "the build goes to the other GPUs") {
		t.Errorf("the server's log does not name the broken GPU:\n%s", said)
	}
	e.state = filepath.Join(t.TempDir(), "state")
	none := e.manager(t, func(c *Config) { c.GPUs = []int{5, 6} })
	if _, _, err := none.Submit(Request{Model: "convnet.onnx", Options: opts(t, onTensorRT)}); err == nil {
		t.Fatal("a server none of whose GPUs answers took a build")
	}
}

// submitOn submits the build over the stand-in TensorRT to m.
func submitOn(t *testing.T, m *Manager) Snapshot {
	t.Helper()
	s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, onTensorRT)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lockedWriter is a writer guarded by a mutex, for a log read while the service writes it.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestAStaleTargetIsCorrectedByTheWorker: the server's Env says GPU 0 is a GPU it no longer
// is (a card swapped, TensorRT upgraded in place, since the server asked); the worker says
// what it loaded, and the build's key, as its snapshot reports it, is that of the engine it
// built, with an engine cache and without.
func TestAStaleTargetIsCorrectedByTheWorker(t *testing.T) {
	twoGPUs(t)
	e := newEnv(t)
	for _, withCache := range []bool{true, false} {
		e.state = filepath.Join(t.TempDir(), "state")
		env := builder.NewEnvWith(func(backend string, device int, lib string) (buildkey.Target, error) {
			real, err := probe.Target(backend, device, lib)
			real.GPU = "Old GPU"
			return real, err
		})
		m := e.manager(t, func(c *Config) {
			c.GPUs, c.Env = []int{0}, env
			if withCache {
				c.EngineCache = builder.EngineCache{Dir: filepath.Join(t.TempDir(), "engines"), Size: "1G", Trust: "self"}
			}
		})
		s, _, err := m.Submit(Request{Model: "convnet.onnx", Options: opts(t, onTensorRT)})
		if err != nil {
			t.Fatal(err)
		}
		end := wait(t, m, s.ID)
		if end.State != StateSucceeded {
			t.Fatalf("cache %v: the build %+v", withCache, end)
		}
		gpu, key := engineGPU(t, m, s.ID)
		if gpu != "Stand-in GPU A" || key != end.Key {
			t.Errorf("cache %v: the manifest names %q with key %s; the build says %s (submitted as %s)", withCache, gpu, key, end.Key, s.Key)
		}
		if s.Key == end.Key {
			t.Errorf("cache %v: the submission was keyed by the worker's GPU already: the Env was not stale", withCache)
		}
		m.Shutdown(t.Context())
		m.Close()
	}
}
