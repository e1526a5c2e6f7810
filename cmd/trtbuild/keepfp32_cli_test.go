package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRebuildKeepingFP32: an --fp16 build that fails with TensorRT 11.2's "No low-precision conv
// kernel available ... Failing node: N" (the stand-in TensorRT fails so on a node that runs in 16 bits) is rebuilt once
// with N kept in float32, says so, and succeeds: exit 0, engine written. With --keep-fp32 N
// given up front there is no retry.
func TestRebuildKeepingFP32(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	const node = "stage2/block1/conv1"
	const note = "rebuilding once with it kept in float32 (to skip this next time, pass --keep-fp32 " + node + ")"
	model := repoModel(t, "convnet.onnx")
	base := []string{"--fp16", "--sim-fp16-fail-node", node, "--sim-speed", "20"}

	t.Run("plain", func(t *testing.T) {
		engine := filepath.Join(t.TempDir(), "m.engine")
		r := trtbuild(t, nil, append([]string{"--backend", "sim", "--no-timing-cache", "-o", engine}, append(base, model)...)...)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		failed := strings.Index(r.stdout, "Failing node: "+node)
		said := strings.Index(r.stdout, note)
		built := strings.Index(r.stdout, "Built ")
		if failed < 0 || said < failed || built < said {
			t.Errorf("want the first build's failure on %s, then the rebuild note, then Built:\n%s", node, r.stdout)
		}
		if strings.Count(r.stdout, "Building engine (6 steps)") != 1 || strings.Count(r.stdout, "Building engine (rebuild) (6 steps)") != 1 {
			t.Errorf("want two builds' root phases, the second named the rebuild:\n%s", r.stdout)
		}
		plan, err := os.ReadFile(engine)
		if err != nil || !bytes.HasPrefix(plan, []byte("TRTBUILD-SIMULATED-PLAN")) {
			t.Fatalf("engine %s: %v, %q", engine, err, plan[:min(len(plan), 40)])
		}
	})

	t.Run("json", func(t *testing.T) {
		cache := filepath.Join(t.TempDir(), "sim.cache")
		run := buildJSON(t, nil, append([]string{"--timing-cache", cache, "-o", filepath.Join(t.TempDir(), "m.engine")}, append(base, model)...)...)
		if run.code != 0 || run.final["status"] != "built" {
			t.Fatalf("exit %d, result %v\n%s", run.code, run.final, run.stderr)
		}
		if !strings.Contains(run.warnings(), note) {
			t.Errorf("no rebuild note among the warnings:\n%s", run.warnings())
		}
		roots := 0
		for _, e := range run.events {
			if e["type"] == "phase_start" && e["parent"] == 0.0 {
				roots++
			}
		}
		if roots != 2 {
			t.Errorf("%d root phases, want one per build", roots)
		}
		// What the first build timed before it failed was merged into the cache, and the
		// second build found it there: it timed less than a build from an empty cache does
		// (TensorRT tells no hits, only what a build adds).
		whole := buildJSON(t, nil, append([]string{"--keep-fp32", node, "--timing-cache", filepath.Join(t.TempDir(), "empty.cache"), "-o", filepath.Join(t.TempDir(), "m.engine")}, append(base, model)...)...)
		if whole.code != 0 || run.num("cache_misses") == 0 || run.num("cache_misses") >= whole.num("cache_misses") {
			t.Errorf("the rebuild timed %d new tactics, a build from an empty cache %d (exit %d): it found nothing in the cache", run.num("cache_misses"), whole.num("cache_misses"), whole.code)
		}
	})

	t.Run("kept up front", func(t *testing.T) {
		engine := filepath.Join(t.TempDir(), "m.engine")
		r := trtbuild(t, nil, append([]string{"--backend", "sim", "--no-timing-cache", "--keep-fp32", node, "-o", engine}, append(base, model)...)...)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "rebuilding") || strings.Contains(r.stdout, "Failing node") || strings.Count(r.stdout, "Building engine (6 steps)") != 1 {
			t.Errorf("want one build, no retry:\n%s", r.stdout)
		}
		if _, err := os.Stat(engine); err != nil {
			t.Fatal(err)
		}
	})
}
