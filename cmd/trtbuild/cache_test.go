package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The simulated builder's timing cache: a magic line, then "<layer>\t<tactic>\t<ns>" lines.
// simCacheHeader is the start of the stand-in TensorRT 11's timing cache, a cache of no entry:
// its magic line, the TensorRT release and the device that made it.
const simCacheHeader = "TRTFAKE-TIMING-CACHE 1\ntensorrt 11.1\ndevice sm_90\n"

// cacheEntries returns the keys of a simulated build's timing cache file (the stand-in
// TensorRT's: the header lines, then one "key\ttactic\tnanoseconds" line per entry).
func cacheEntries(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the timing cache: %v", err)
	}
	if !strings.HasPrefix(string(data), simCacheHeader) {
		t.Fatalf("%s does not start with the stand-in's cache header: %.80q", path, data)
	}
	keys := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(string(data), simCacheHeader), "\n"), "\n") {
		if l == "" {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			t.Fatalf("malformed cache line %q", l)
		}
		keys[f[0]] = true
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
	// Every timing the build made is in the file, and the build counted them (TensorRT tells
	// no hits, only what it added).
	timed := len(cacheEntries(t, cache))
	if timed == 0 || first.num("cache_misses") != timed || first.num("cache_hits") != 0 {
		t.Errorf("first build: %d misses, %d hits; the cache holds %d entries", first.num("cache_misses"), first.num("cache_hits"), timed)
	}

	second := buildJSON(t, nil, args...)
	if second.code != 0 || second.final["status"] != "built" || second.final["cache_used"] != true {
		t.Fatalf("second build: exit %d %v\n%s", second.code, second.final, second.stderr)
	}
	if second.num("cache_misses") != 0 || len(cacheEntries(t, cache)) != timed {
		t.Errorf("second build: %d misses, the cache %d entries; want nothing new timed", second.num("cache_misses"), len(cacheEntries(t, cache)))
	}
	// The warm build is faster because it skips the work that makes a cold build slow, timing
	// tactics: counted in the builder's own events, not measured by the clock.
	// (A node with a single candidate is measured anyway: it has nothing to look up.)
	if a, b := first.measuringSteps(), second.measuringSteps(); a == 0 || b >= a {
		t.Errorf("tactic-timing steps: %d in the first build, %d in the second; want fewer", a, b)
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
	path := filepath.Join(xdg, "trtbuild", "timing-cache", "sim-trt11.cache") // the stand-in TensorRT 11's
	if n := len(cacheEntries(t, path)); n == 0 || n != first.num("cache_misses") {
		t.Errorf("the auto cache holds %d entries, the build timed %d tactics", n, first.num("cache_misses"))
	}
	second := buildJSON(t, env, "--sim-speed", "20", model)
	if second.final["cache_used"] != true || second.num("cache_misses") != 0 {
		t.Errorf("the second build timed %d tactics again (cache used: %v)", second.num("cache_misses"), second.final["cache_used"])
	}
	off := buildJSON(t, env, "--sim-speed", "20", "--no-timing-cache", model)
	if off.num("cache_misses") != 0 || off.final["cache_used"] == true {
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
	models := []string{"convnet.onnx", "fp16.onnx", "transformer_block.onnx", "dynamic_batch.onnx"}
	// Dynamic inputs need a shape (the others have none to give).
	shapes := func(name string) []string {
		switch name {
		case "transformer_block.onnx":
			return []string{"--shapes", "tokens:1x16x32"}
		case "dynamic_batch.onnx":
			return []string{"--shapes", "images:2x3x64x64"}
		}
		return nil
	}
	dir := t.TempDir()
	// What each build learns, measured alone.
	want := map[string]bool{}
	own := make([]map[string]bool, len(models))
	for i, name := range models {
		cache := filepath.Join(dir, fmt.Sprintf("alone-%d.cache", i))
		r := buildJSON(t, nil, append(shapes(name), "--sim-speed", "50", "--timing-cache", cache, repoModel(t, name))...)
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
			runs[i] = buildJSON(t, nil, append(shapes(name), "--sim-speed", "50", "--timing-cache", shared, model)...)
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
			lost = append(lost, k)
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
	cmd, errOut, out := startBuild(t, "--backend", "sim", "--sim-speed", "0.1", "--sim-tactics", "4", "--progress", "plain", "--timing-cache", cache, model)
	// Two nodes timed: something is in the cache, and most of the graph is not.
	timed := regexp.MustCompile(`Timing graph nodes [1-9][0-9]?/`)
	deadline := time.Now().Add(time.Minute)
	for !timed.MatchString(out.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no tactic was timed within a minute:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, time.Minute); code != 130 {
		t.Fatalf("exit %d, want 130\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	saved := len(cacheEntries(t, cache))
	if saved == 0 {
		t.Fatal("the cancelled build saved nothing")
	}
	next := buildJSON(t, nil, "--sim-speed", "20", "--sim-tactics", "4", "--timing-cache", cache, model)
	all := len(cacheEntries(t, cache))
	if next.code != 0 || next.final["cache_used"] != true || saved >= all || next.num("cache_misses") != all-saved {
		t.Errorf("the next build: exit %d, %d timed; the cancelled build saved %d of %d: want the rest timed", next.code, next.num("cache_misses"), saved, all)
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
		{"a zero-key cache", []byte(simCacheHeader)},
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
	if err := os.WriteFile(cache, []byte(simCacheHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--sim-speed", "20", "--sim-tactics", "3", "--strict-cache", "--timing-cache", cache, model}
	first := buildJSON(t, nil, args...)
	if first.code != 0 || first.final["status"] != "built" || first.final["cache_used"] != true {
		t.Fatalf("a zero-key cache should be used, even with --strict-cache: exit %d %v\n%s", first.code, first.final, first.stderr)
	}
	if w := first.warnings(); strings.Contains(w, "cache") {
		t.Errorf("warnings about a valid empty cache:\n%s", w)
	}
	timed := len(cacheEntries(t, cache))
	if timed == 0 || timed != first.num("cache_misses") {
		t.Errorf("the zero-key cache holds %d entries after the build, which timed %d: want them merged into it", timed, first.num("cache_misses"))
	}
	second := buildJSON(t, nil, args...)
	if second.code != 0 || second.final["cache_used"] != true || second.num("cache_misses") != 0 {
		t.Errorf("second build: exit %d, %d timed; want every timing from the cache", second.code, second.num("cache_misses"))
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
