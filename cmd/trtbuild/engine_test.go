package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trtbuild/trtbuild/internal/buildkey"
	"github.com/trtbuild/trtbuild/internal/inspect"
	"github.com/trtbuild/trtbuild/internal/manifest"
)

func simBuild(t *testing.T, args ...string) result {
	t.Helper()
	r := trtbuild(t, nil, append([]string{"--backend", "sim", "--sim-speed", "1000", "--progress", "plain"}, args...)...)
	if r.code != 0 {
		t.Fatalf("build %v: exit %d\n%s", args, r.code, r.stderr)
	}
	return r
}

// TestEngineCacheBuild: a miss builds and stores, a hit copies and says so, and the manifest
// beside each engine says which happened.
func TestEngineCacheBuild(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	cache := filepath.Join(dir, "cache")
	first := filepath.Join(dir, "first.engine")
	r := simBuild(t, model, "-o", first, "--engine-cache", cache)
	if strings.Contains(r.stdout, "Engine cache hit") {
		t.Fatalf("first build hit the cache:\n%s", r.stdout)
	}
	m1, err := manifest.Read(manifest.Path(first))
	if err != nil || m1.EngineCache == nil || m1.EngineCache.Hit || m1.Summary.Status != "built" || !buildkey.Valid(m1.Key) {
		t.Fatalf("manifest of a built engine: %+v %v", m1, err)
	}
	second := filepath.Join(dir, "second.engine")
	r = simBuild(t, model, "-o", second, "--engine-cache", cache)
	if !strings.Contains(r.stdout, "Engine cache hit: "+second) || !strings.Contains(r.stdout, "nothing was built") {
		t.Fatalf("second build did not say it hit the cache:\n%s", r.stdout)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("the cached engine differs from the built one")
	}
	m2, err := manifest.Read(manifest.Path(second))
	if err != nil || m2.Key != m1.Key || m2.EngineCache == nil || !m2.EngineCache.Hit || m2.Engine.File != "second.engine" {
		t.Fatalf("manifest of a cached engine: %+v %v", m2, err)
	}
	// JSON progress: a build line, the hit as an info log line, a result line.
	r = trtbuild(t, nil, "--backend", "sim", model, "-o", filepath.Join(dir, "third.engine"), "--engine-cache", cache, "--progress", "json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], `"severity":"info"`) || !strings.Contains(lines[2], `"status":"built"`) {
		t.Fatalf("json hit: exit %d\n%s", r.code, r.stdout)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("not a JSON line: %s", l)
		}
	}
	// Another precision is another key: a miss.
	r = simBuild(t, model, "-o", filepath.Join(dir, "fp16.engine"), "--engine-cache", cache, "--fp16")
	if strings.Contains(r.stdout, "Engine cache hit") {
		t.Fatal("an --fp16 build hit the cache of a default-precision one")
	}
	// Without --engine-cache, a manifest is still written.
	plain := filepath.Join(dir, "plain.engine")
	simBuild(t, model, "-o", plain)
	if m, err := manifest.Read(manifest.Path(plain)); err != nil || m.EngineCache != nil || m.Key != m1.Key {
		t.Fatalf("manifest without a cache: %+v %v", m, err)
	}
}

func TestEngineCacheBadInput(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	engine := filepath.Join(dir, "x.engine")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"cache is a file", []string{"--engine-cache", file}, "is a file"},
		{"cache under a file", []string{"--engine-cache", filepath.Join(file, "c")}, "give a writable folder"},
		{"bad size", []string{"--engine-cache", filepath.Join(dir, "c"), "--engine-cache-size", "huge"}, "invalid --engine-cache-size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := trtbuild(t, nil, append([]string{"--backend", "sim", model, "-o", engine}, c.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, c.want)
			}
			if _, err := os.Stat(engine); err == nil {
				t.Fatal("an engine was written")
			}
		})
	}
}

func TestKeyCommand(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	renamed := filepath.Join(t.TempDir(), "other-name.onnx")
	data, _ := os.ReadFile(model)
	if err := os.WriteFile(renamed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	key := func(args ...string) string {
		t.Helper()
		r := trtbuild(t, nil, append([]string{"key", "--backend", "sim"}, args...)...)
		if r.code != 0 {
			t.Fatalf("key %v: %d %s", args, r.code, r.stderr)
		}
		first, _, _ := strings.Cut(r.stdout, "\n")
		if !buildkey.Valid(first) {
			t.Fatalf("key printed %q", r.stdout)
		}
		return first
	}
	base := key(model)
	if key(renamed) != base {
		t.Error("renaming the model changed the key")
	}
	for _, flags := range [][]string{{"--fp16"}, {"--opt-level", "5"}, {"--workspace", "1G"}, {"--tacticSources=-CUBLAS"}, {"--profilingVerbosity=detailed"}} {
		if key(append([]string{model}, flags...)...) == base {
			t.Errorf("%v did not change the key", flags)
		}
	}
	// The static model's own shapes, given explicitly, are the build without them.
	if key(model, "--shapes", "images:1x3x224x224") != base {
		t.Error("giving the static model's own shapes changed the key")
	}
	r := trtbuild(t, nil, "key", "--backend", "sim", model, "--json")
	var out struct {
		Key   string         `json:"key"`
		Parts buildkey.Parts `json:"parts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Key != base || out.Parts.Schema != buildkey.Schema {
		t.Fatalf("key --json: %v %+v", err, out)
	}
	// The build writes the key that `trtbuild key` prints.
	engine := filepath.Join(filepath.Dir(model), "m.engine")
	simBuild(t, model, "-o", engine)
	if m, err := manifest.Read(manifest.Path(engine)); err != nil || m.Key != base {
		t.Fatalf("the build's manifest key %v differs from trtbuild key's %s (%v)", m, base, err)
	}
}

// trtPlanFile writes an engine file by the plan header layout trtexec's --getPlanVersionOnly
// reads: "ftrt", serialization version 0, then the version bytes at offsets 24 to 27.
func trtPlanFile(t *testing.T, dir string, version [4]byte) string {
	t.Helper()
	b := append([]byte("ftrt"), make([]byte, 20)...)
	b = append(b, version[:]...)
	b = append(b, []byte("the rest of a plan")...)
	p := filepath.Join(dir, "real.engine")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEngineInspect(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	engine := filepath.Join(dir, "m.engine")
	simBuild(t, model, "-o", engine, "--fp16")

	r := trtbuild(t, nil, "engine", "inspect", engine)
	if r.code != 0 || !strings.Contains(r.stdout, "simulated by trtbuild") || !strings.Contains(r.stdout, "key        "+buildkey.Prefix) || !strings.Contains(r.stdout, "precision  fp16") {
		t.Fatalf("inspect of a simulated engine: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = trtbuild(t, nil, "engine", "inspect", engine, "--expect-tensorrt", "10.16")
	if r.code != 1 || !strings.Contains(r.stderr, "expected 10.16") {
		t.Fatalf("--expect-tensorrt on a simulated plan: %d %s", r.code, r.stderr)
	}

	real := trtPlanFile(t, dir, [4]byte{10, 16, 0, 32})
	r = trtbuild(t, nil, "engine", "inspect", real, "--expect-tensorrt", "10.16.0")
	if r.code != 0 || !strings.Contains(r.stdout, "written by TensorRT 10.16.0.32") || !strings.Contains(r.stdout, "no manifest") {
		t.Fatalf("inspect of a TensorRT plan: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = trtbuild(t, nil, "engine", "inspect", real, "--json", "--expect-tensorrt", "11")
	var rep inspect.EngineReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 1 || rep.Header.TensorRT != "10.16.0.32" || len(rep.Problems) != 1 {
		t.Fatalf("inspect --json of a stale plan: %d %v %+v", r.code, err, rep)
	}

	// An engine replaced after its manifest was written is refused.
	if err := os.WriteFile(engine, []byte("TRTBUILD-SIMULATED-PLAN 1\nmodel other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = trtbuild(t, nil, "engine", "inspect", engine)
	if r.code != 1 || !strings.Contains(r.stderr, "SHA-256 differs") {
		t.Fatalf("inspect of a replaced engine: %d %s", r.code, r.stderr)
	}

	for _, c := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "none.engine"), "does not exist"},
		{"a model", model, "not a TensorRT engine"},
		{"a folder", dir, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := trtbuild(t, nil, "engine", "inspect", c.path)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, c.want)
			}
		})
	}
}

// TestEngineCacheConcurrentProcesses: four builds of one model into one cache at once all
// succeed, and the cache holds one whole entry.
func TestEngineCacheConcurrentProcesses(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	dir := filepath.Dir(model)
	cache := filepath.Join(dir, "cache")
	var cmds []*exec.Cmd
	for i := 0; i < 4; i++ {
		cmd := exec.Command(binary, "--backend", "sim", "--sim-speed", "1000", "--progress", "quiet", model,
			"-o", filepath.Join(dir, fmt.Sprintf("e%d.engine", i)), "--engine-cache", cache)
		cmd.Env = testEnv(t)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(cache, "entries"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache entries %v, %v; want one", entries, err)
	}
	// The engines need not be byte-identical: a build that started after another saved its
	// timing cache records cached timings. Each is a whole plan, and the stored one is one of them.
	stored, err := os.ReadFile(filepath.Join(cache, "entries", entries[0].Name(), "engine"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := 0; i < 4; i++ {
		got, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("e%d.engine", i)))
		if !bytes.HasPrefix(got, []byte("TRTBUILD-SIMULATED-PLAN 1\n")) {
			t.Fatalf("engine %d is not a whole plan", i)
		}
		found = found || bytes.Equal(got, stored)
	}
	if !found {
		t.Fatal("the stored engine is none of the built ones")
	}
	if m, err := manifest.Read(filepath.Join(cache, "entries", entries[0].Name(), "manifest.json")); err != nil || m.Key != entries[0].Name() {
		t.Fatalf("stored manifest: %+v %v", m, err)
	}
	for i := 0; i < 4; i++ {
		m, err := manifest.Read(manifest.Path(filepath.Join(dir, fmt.Sprintf("e%d.engine", i))))
		if err != nil || m.Key != entries[0].Name() {
			t.Fatalf("engine %d manifest: %+v %v", i, m, err)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(cache, "tmp")); len(left) != 0 {
		t.Fatalf("temporary entries left: %v", left)
	}
}

// TestEngineCacheEvicts: with a limit smaller than two engines, storing the second removes
// the first, and a later build of the first model builds again.
func TestEngineCacheEvicts(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	a := repoModel(t, "convnet.onnx")
	b := repoModel(t, "dynamic_batch.onnx")
	cache := filepath.Join(t.TempDir(), "cache")
	limit := []string{"--engine-cache", cache, "--engine-cache-size", "1K"} // each engine is larger
	simBuild(t, append([]string{a, "-o", filepath.Join(filepath.Dir(a), "a1.engine")}, limit...)...)
	simBuild(t, append([]string{b, "-o", filepath.Join(filepath.Dir(b), "b.engine"), "--shapes", "images:1x3x64x64"}, limit...)...)
	entries, err := os.ReadDir(filepath.Join(cache, "entries"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries after eviction: %v %v", entries, err)
	}
	r := simBuild(t, append([]string{a, "-o", filepath.Join(filepath.Dir(a), "a2.engine")}, limit...)...)
	if strings.Contains(r.stdout, "Engine cache hit") {
		t.Fatal("an evicted engine was served")
	}
}
