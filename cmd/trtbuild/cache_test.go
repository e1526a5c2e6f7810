package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The simulated builder's timing cache: a magic line, then "<layer>\t<tactic>\t<ns>" lines.
const simCacheMagic = "TRTBUILD-SIM-TIMING-CACHE 1"

// cacheEntries returns the layer/tactic keys of a simulated-builder cache file.
func cacheEntries(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the timing cache: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != simCacheMagic {
		t.Fatalf("%s does not start with the cache's magic line: %q", path, lines[0])
	}
	keys := map[string]bool{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			t.Fatalf("malformed cache line %q", l)
		}
		keys[f[0]+"\t"+f[1]] = true
	}
	return keys
}

// jsonRun is a build's --progress json output, decoded.
type jsonRun struct {
	result
	events []map[string]any
	final  map[string]any // the result line
}

func buildJSON(t *testing.T, env []string, args ...string) jsonRun {
	t.Helper()
	r := trtbuild(t, env, append([]string{"--backend", "sim", "--progress", "json"}, args...)...)
	run := jsonRun{result: r}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a line of the JSON output does not parse: %v\n%s", err, line)
		}
		run.events = append(run.events, m)
		if m["type"] == "result" {
			run.final = m
		}
	}
	if run.final == nil {
		t.Fatalf("no result line (exit %d)\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
	}
	return run
}

// measuringSteps counts the steps of "Measuring tactic time" phases: one per timed iteration.
func (j jsonRun) measuringSteps() int {
	measuring := map[float64]bool{}
	n := 0
	for _, e := range j.events {
		switch e["type"] {
		case "phase_start":
			if e["name"] == "Measuring tactic time" {
				measuring[e["id"].(float64)] = true
			}
		case "step":
			if measuring[e["id"].(float64)] {
				n++
			}
		}
	}
	return n
}

func (j jsonRun) num(key string) int {
	v, _ := j.final[key].(float64)
	return int(v)
}

func (j jsonRun) warnings() string {
	var b strings.Builder
	for _, e := range j.events {
		if e["type"] == "log" && e["severity"] == "warning" {
			fmt.Fprintln(&b, e["message"])
		}
	}
	return b.String()
}

// TestTimingCacheSecondBuildFaster builds twice with one cache file: the first build times every
// tactic and saves them; the second finds them all in the cache and times none.
func TestTimingCacheSecondBuildFaster(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	cache := filepath.Join(t.TempDir(), "convnet.cache")
	args := []string{"--sim-speed", "20", "--sim-tactics", "3", "--timing-cache", cache, model}

	first := buildJSON(t, nil, args...)
	if first.code != 0 || first.final["status"] != "built" {
		t.Fatalf("first build: exit %d %v\n%s", first.code, first.final, first.stderr)
	}
	// The simulated builder times TensorRT's optimized graph: convnet's 24 nodes make 12 layers
	// (Conv + BatchNormalization + Relu fused, one input reformat layer).
	const layers, tactics = 12, 3
	if first.num("cache_misses") != layers*tactics || first.num("cache_hits") != 0 {
		t.Errorf("first build: %d misses, %d hits; want %d misses", first.num("cache_misses"), first.num("cache_hits"), layers*tactics)
	}
	if n := len(cacheEntries(t, cache)); n != layers*tactics {
		t.Errorf("the cache holds %d entries after the first build, want %d", n, layers*tactics)
	}

	second := buildJSON(t, nil, args...)
	if second.code != 0 || second.final["status"] != "built" || second.final["cache_used"] != true {
		t.Fatalf("second build: exit %d %v\n%s", second.code, second.final, second.stderr)
	}
	if second.num("cache_hits") != layers*tactics || second.num("cache_misses") != 0 {
		t.Errorf("second build: %d hits, %d misses; want every tactic from the cache", second.num("cache_hits"), second.num("cache_misses"))
	}
	// The warm build is faster because it skips the work that makes a cold build slow, timing
	// tactics: counted in the builder's own events, not measured by the clock.
	if a, b := first.measuringSteps(), second.measuringSteps(); a == 0 || b != 0 {
		t.Errorf("tactic-timing steps: %d in the first build, %d in the second; want some, then none", a, b)
	}
}

// TestTimingCacheAuto checks the default: one file per builder under the user cache folder.
func TestTimingCacheAuto(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "fp16.onnx")
	xdg := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + xdg}
	first := buildJSON(t, env, "--sim-speed", "20", model)
	if first.code != 0 {
		t.Fatalf("exit %d\n%s", first.code, first.stderr)
	}
	path := filepath.Join(xdg, "trtbuild", "timing-cache", "sim.cache")
	if n := len(cacheEntries(t, path)); n == 0 || n != first.num("cache_misses") {
		t.Errorf("the auto cache holds %d entries, the build timed %d tactics", n, first.num("cache_misses"))
	}
	second := buildJSON(t, env, "--sim-speed", "20", model)
	if second.num("cache_hits") != first.num("cache_misses") {
		t.Errorf("the second build found %d of %d tactics in the auto cache", second.num("cache_hits"), first.num("cache_misses"))
	}
	off := buildJSON(t, env, "--sim-speed", "20", "--no-timing-cache", model)
	if off.num("cache_hits") != 0 || off.final["cache_used"] == true {
		t.Errorf("--no-timing-cache used the cache: %v", off.final)
	}
	r := trtbuild(t, env, "--backend", "sim", "--timing-cache", filepath.Join(xdg, "x.cache"), "--no-timing-cache", model)
	if r.code != 2 || !strings.Contains(r.stderr, "not both") {
		t.Errorf("--timing-cache with --no-timing-cache: exit %d, %s", r.code, r.stderr)
	}
}

// TestTimingCacheConcurrentBuilds runs four builds of different models at once, sharing one
// cache file: the file must end up with every entry each of them learned.
func TestTimingCacheConcurrentBuilds(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	models := []string{"convnet.onnx", "fp16.onnx", "control_flow.onnx", "custom_op.onnx"}
	dir := t.TempDir()
	// What each build learns, measured alone.
	want := map[string]bool{}
	own := make([]map[string]bool, len(models))
	for i, name := range models {
		cache := filepath.Join(dir, fmt.Sprintf("alone-%d.cache", i))
		r := buildJSON(t, nil, "--sim-speed", "50", "--timing-cache", cache, repoModel(t, name))
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		own[i] = cacheEntries(t, cache)
		for k := range own[i] {
			want[k] = true
		}
	}
	for i := range own {
		unique := 0
		for k := range own[i] {
			shared := false
			for j := range own {
				shared = shared || (j != i && own[j][k])
			}
			if !shared {
				unique++
			}
		}
		if unique == 0 {
			t.Fatalf("%s learns nothing the others do not: the test could not see a lost save", models[i])
		}
	}

	shared := filepath.Join(dir, "shared.cache")
	var wg sync.WaitGroup
	runs := make([]jsonRun, len(models))
	for i, name := range models {
		model := repoModel(t, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = buildJSON(t, nil, "--sim-speed", "50", "--timing-cache", shared, model)
		}()
	}
	wg.Wait()
	for i, r := range runs {
		if r.code != 0 || strings.Contains(r.warnings(), "timing cache") {
			t.Errorf("%s: exit %d, warnings:\n%s\nstderr: %s", models[i], r.code, r.warnings(), r.stderr)
		}
	}
	got := cacheEntries(t, shared)
	var lost []string
	for k := range want {
		if !got[k] {
			lost = append(lost, strings.ReplaceAll(k, "\t", " tactic "))
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 || len(got) != len(want) {
		t.Errorf("the shared cache holds %d entries, want %d; lost: %v", len(got), len(want), lost)
	}
	if _, err := os.Stat(shared + ".lock"); err != nil {
		t.Errorf("no lock file beside the cache: %v", err)
	}
}

func TestTimingCacheCorrupt(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	garbage := []byte("TRTBUILD-SIM-TIMING-CACHE 1\nthis line has no tabs\n\x00\x01")
	tests := []struct {
		name    string
		content []byte
	}{
		{"garbage", garbage},
		{"a TensorRT cache", append([]byte("\x7fTRTC"), bytes.Repeat([]byte{0xab}, 64)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := repoModel(t, "fp16.onnx")
			cache := filepath.Join(t.TempDir(), "bad.cache")
			if err := os.WriteFile(cache, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			r := buildJSON(t, nil, "--sim-speed", "20", "--timing-cache", cache, model)
			if r.code != 0 || r.final["status"] != "built" || r.final["cache_used"] == true {
				t.Fatalf("a corrupt cache should leave the build working from an empty cache: exit %d %v\n%s", r.code, r.final, r.stderr)
			}
			w := r.warnings()
			if !strings.Contains(w, "timing cache "+cache+" is corrupt or was made by another TensorRT version or GPU") || !strings.Contains(w, "delete it") {
				t.Errorf("no clear warning naming the file and the fix:\n%s", w)
			}
			if got, _ := os.ReadFile(cache); !bytes.Equal(got, tt.content) {
				t.Errorf("the corrupt cache was overwritten with %q", got)
			}
			if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err != nil {
				t.Errorf("no engine: %v", err)
			}

			// --strict-cache makes it an error, and the engine is not kept.
			os.Remove(strings.TrimSuffix(model, ".onnx") + ".engine")
			r2 := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", "--strict-cache", "--timing-cache", cache, model)
			// Decided before the build, by the builder that reads the cache.
			if r2.code != 1 || !strings.Contains(r2.stderr, "--strict-cache refuses it") || !strings.Contains(r2.stderr, cache) ||
				strings.Contains(r2.stdout, "Measuring tactic time") {
				t.Errorf("--strict-cache with a corrupt cache: exit %d\nstderr: %s", r2.code, r2.stderr)
			}
			if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err == nil {
				t.Error("--strict-cache kept the engine although the cache was rejected")
			}
			if got, _ := os.ReadFile(cache); !bytes.Equal(got, tt.content) {
				t.Errorf("the corrupt cache was overwritten with %q", got)
			}
		})
	}
}

// TestTimingCacheSavedOnCancel cancels a build after it has timed some layers: what it learned
// is in the cache file, and the next build uses it.
func TestTimingCacheSavedOnCancel(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	cache := filepath.Join(t.TempDir(), "c.cache")
	const layers, tactics = 12, 4 // convnet's optimized graph, as above
	cmd, errOut, out := startBuild(t, "--backend", "sim", "--sim-speed", "2", "--sim-tactics", "4", "--timing-cache", cache, model)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "DONE") || !strings.Contains(out.String(), "Finding fastest tactic for") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no layer was timed within 30s:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 30*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	saved := len(cacheEntries(t, cache))
	if saved < tactics || saved >= layers*tactics {
		t.Fatalf("the cancelled build saved %d entries, want at least one layer's %d and fewer than all %d", saved, tactics, layers*tactics)
	}
	next := buildJSON(t, nil, "--sim-speed", "20", "--sim-tactics", "4", "--timing-cache", cache, model)
	if next.code != 0 || next.num("cache_hits") != saved || next.num("cache_misses") != layers*tactics-saved {
		t.Errorf("the next build: exit %d, %d hits, %d misses; want %d hits", next.code, next.num("cache_hits"), next.num("cache_misses"), saved)
	}
}

// TestTimingCacheCancelledBeforeTiming cancels a build before it has timed one tactic (in the
// silence at the start of "Timing graph nodes"): nothing was timed, so nothing is saved. No
// cache file is created, and an existing one (a zero-key cache too) is left byte for byte.
func TestTimingCacheCancelledBeforeTiming(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	tests := []struct {
		name  string
		setup []byte // the cache file before the build; nil: none
	}{
		{"no file", nil},
		{"a zero-key cache", []byte(simCacheMagic + "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := repoModel(t, "convnet.onnx")
			cache := filepath.Join(t.TempDir(), "c.cache")
			if tt.setup != nil {
				if err := os.WriteFile(cache, tt.setup, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The silence is long enough for the cancel to arrive before the first tactic's
			// first step, even on a busy machine; the builder sees it at that step, before any
			// tactic is complete. (The simulated silence is not cut short by a cancel, as
			// TensorRT's is not: the test lasts as long as the silence.)
			cmd, errOut, out := startBuild(t, "--backend", "sim", "--sim-silent", "15s", "--timing-cache", cache, model)
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, time.Minute); code != 130 {
				t.Fatalf("exit %d, want 130\nstderr: %s\nstdout: %s", code, errOut, out)
			}
			got, err := os.ReadFile(cache)
			switch {
			case tt.setup == nil && err == nil:
				t.Errorf("the cancelled build wrote a cache of %d bytes although it timed nothing: %q", len(got), got)
			case tt.setup == nil && !os.IsNotExist(err):
				t.Errorf("the cache file: %v", err)
			case tt.setup != nil && !bytes.Equal(got, tt.setup):
				t.Errorf("the cache file changed from %q to %q (err %v)", tt.setup, got, err)
			}
			if strings.Contains(errOut.String(), "corrupt") {
				t.Errorf("a warning about the cache:\n%s", errOut)
			}
		})
	}
}

// TestTimingCacheZeroKeys: a valid cache with no entry is a cache, just empty: it is used (no
// warning), and what the build times is merged into it; the next build finds it all there.
func TestTimingCacheZeroKeys(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	cache := filepath.Join(t.TempDir(), "zero.cache")
	if err := os.WriteFile(cache, []byte(simCacheMagic+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const layers, tactics = 12, 3 // convnet's optimized graph, as above
	args := []string{"--sim-speed", "20", "--sim-tactics", "3", "--strict-cache", "--timing-cache", cache, model}
	first := buildJSON(t, nil, args...)
	if first.code != 0 || first.final["status"] != "built" || first.final["cache_used"] != true {
		t.Fatalf("a zero-key cache should be used, even with --strict-cache: exit %d %v\n%s", first.code, first.final, first.stderr)
	}
	if w := first.warnings(); strings.Contains(w, "cache") {
		t.Errorf("warnings about a valid empty cache:\n%s", w)
	}
	if n := len(cacheEntries(t, cache)); n != layers*tactics {
		t.Errorf("the zero-key cache holds %d entries after the build, want %d merged into it", n, layers*tactics)
	}
	second := buildJSON(t, nil, args...)
	if second.code != 0 || second.num("cache_hits") != layers*tactics || second.num("cache_misses") != 0 {
		t.Errorf("second build: exit %d, %d hits, %d misses; want every tactic from the cache", second.code, second.num("cache_hits"), second.num("cache_misses"))
	}
}

// TestTimingCacheUnwritable gives a cache path whose folder cannot be created: the build still
// succeeds, with one clear warning.
func TestTimingCacheUnwritable(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "fp16.onnx")
	blocker := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(blocker, "c.cache")
	r := trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", "--timing-cache", cache, model)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0: the cache must not affect the build\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
	}
	want := "WARNING: timing cache not saved to " + cache + ": not a directory; make its folder writable, or pass --no-timing-cache"
	if strings.Count(r.stdout, "WARNING: timing cache") != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("want one warning %q; output:\n%s", want, r.stdout)
	}
	if !strings.Contains(r.stdout, "Built ") {
		t.Errorf("the build's outcome is missing:\n%s", r.stdout)
	}
	if _, err := os.Stat(strings.TrimSuffix(model, ".onnx") + ".engine"); err != nil {
		t.Errorf("no engine: %v", err)
	}
	r = trtbuild(t, nil, "--backend", "sim", "--sim-speed", "20", "--strict-cache", "--timing-cache", cache, model)
	if r.code != 1 || !strings.Contains(r.stderr, "not saved") {
		t.Errorf("--strict-cache with an unwritable cache: exit %d\n%s", r.code, r.stderr)
	}
}
