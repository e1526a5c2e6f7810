package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBudgets ends builds with --timeout and --stall-timeout: exit 124, the old engine kept, and
// a message that names the running phase and how long it has run. The exit status and the
// messages prove that the budget ended the build (which would otherwise run on, or stay
// silent for a minute); how long the run took is not checked.
func TestBudgets(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr []string
		// minRunning is the least time the named phase must be said to have run.
		minRunning float64
	}{
		{
			name:   "timeout",
			args:   []string{"--sim-speed", "1", "--timeout", "1500ms"},
			stderr: []string{"Build exceeded --timeout 1.5s in \"", "running for "},
		},
		{
			name: "stall timeout",
			// A silent builder reaches no step boundary, so it cannot see the cancel either:
			// --kill-after ends it.
			args:   []string{"--sim-speed", "20", "--sim-silent", "60s", "--stall-timeout", "1s", "--kill-after", "1s"},
			stderr: []string{"No progress for --stall-timeout 1s in \"Timing graph nodes\" (", "running for ", "did not stop within --kill-after 1s"},
			// A phase open through a silence of 1s has run at least that long, however
			// busy the machine is (the time is measured on the builder's clock up to now).
			minRunning: 1.0,
		},
		{
			// The builder ignores the cancel: --kill-after stops the worker.
			name:   "kill after",
			args:   []string{"--sim-speed", "1", "--sim-ignore-cancel", "--timeout", "1s", "--kill-after", "1s"},
			stderr: []string{"Build exceeded --timeout 1s in \"", "The builder did not stop within --kill-after 1s; stopped the worker."},
		},
	}
	runningFor := regexp.MustCompile(`running for ([0-9.]+)s\)`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := repoModel(t, "convnet.onnx")
			engine := strings.TrimSuffix(model, ".onnx") + ".engine"
			if err := os.WriteFile(engine, []byte("GOOD ENGINE"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := trtbuild(t, nil, append([]string{"--backend", "sim", "--no-timing-cache", model}, tt.args...)...)
			if r.code != 124 {
				t.Fatalf("exit %d, want 124\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			m := runningFor.FindStringSubmatch(r.stderr)
			if m == nil {
				t.Errorf("stderr should say how long the phase has been running:\n%s", r.stderr)
			} else if secs, _ := strconv.ParseFloat(m[1], 64); secs < tt.minRunning {
				t.Errorf("the phase is said to have run %ss, want at least %.1fs:\n%s", m[1], tt.minRunning, r.stderr)
			}
			if !strings.Contains(r.stdout, "Build timed out after") {
				t.Errorf("stdout lacks the outcome:\n%s", r.stdout)
			}
			assertUnchanged(t, engine, "GOOD ENGINE")
			assertNoTempFiles(t, filepath.Dir(model))
		})
	}
}

// TestTimeoutSaidOnce: with the progress on a pipe, the budget's message reaches stderr once
// (as the notice), not a second time as the final error.
func TestTimeoutSaidOnce(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	r := trtbuild(t, nil, "--backend", "sim", "--no-timing-cache", "--sim-speed", "1", "--timeout", "1s", "--progress", "plain",
		"-o", filepath.Join(t.TempDir(), "m.engine"), model)
	if r.code != 124 {
		t.Fatalf("exit %d, want 124\nstderr: %s", r.code, r.stderr)
	}
	if n := strings.Count(strings.ToLower(r.stderr), "exceeded --timeout 1s"); n != 1 {
		t.Errorf("the timeout is said %d times on stderr, want once:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stderr, "trtbuild: Build") || strings.Contains(r.stderr, "trtbuild: No") {
		t.Errorf("a capital letter after \"trtbuild: \":\n%s", r.stderr)
	}
}

// TestColorForce: CLICOLOR_FORCE=1 colours the plain output on a pipe, as docs/usage.md says;
// without it, or with NO_COLOR as well, the output has no escape sequence.
func TestColorForce(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	for _, tc := range []struct {
		env   []string
		color bool
	}{
		{nil, false},
		{[]string{"CLICOLOR_FORCE=1"}, true},
		{[]string{"CLICOLOR_FORCE=1", "NO_COLOR=1"}, false},
	} {
		r := trtbuild(t, tc.env, "--backend", "sim", "--no-timing-cache", "--sim-speed", "50", "--progress", "plain",
			"-o", filepath.Join(t.TempDir(), "m.engine"), model)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.env, r.code, r.stderr)
		}
		if got := strings.Contains(r.stdout, "\x1b["); got != tc.color {
			t.Errorf("%v: escape sequences %v, want %v:\n%q", tc.env, got, tc.color, r.stdout)
		}
	}
}

// TestFailureAttribution fails the middle node while four builder threads time nodes (the
// stand-in's stress setting): TensorRT names no layer in its phases, so plain and JSON output
// both name the node TensorRT's error names, and the phase the build was in.
func TestFailureAttribution(t *testing.T) {
	t.Parallel() // a real subprocess in its own folders, cache and HOME
	model := repoModel(t, "convnet.onnx")
	const node = "stage2/block1/conv2 + stage2/block1/bn2" // the middle of the 10 layers TensorRT times
	args := []string{"--backend", "sim", "--no-timing-cache", "--sim-speed", "20", "--sim-threads", "4", "--sim-scenario", "fail"}
	for _, mode := range []string{"plain", "json"} {
		r := trtbuild(t, nil, append(args, "--progress", mode, "-o", filepath.Join(t.TempDir(), "m.engine"), model)...)
		if r.code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s", mode, r.code, r.stderr)
		}
		switch mode {
		case "plain":
			if !strings.Contains(r.stdout, "Failed on node: "+node+" (named in the error)") || !strings.Contains(r.stdout, "Failed in: … › ") {
				t.Errorf("plain does not name the failing node and phase:\n%s", r.stdout)
			}
			if !strings.Contains(r.stdout, "Hint: ") {
				t.Errorf("plain has no hint:\n%s", r.stdout)
			}
		case "json":
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			var res struct {
				Type  string `json:"type"`
				Where struct {
					Path []string `json:"path"`
					Node string   `json:"node"`
				} `json:"where"`
				Hint string `json:"hint"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
				t.Fatal(err)
			}
			if res.Type != "result" || len(res.Where.Path) == 0 || res.Where.Node != node || res.Hint == "" {
				t.Errorf("the JSON result does not name the failing node with a hint: %s", lines[len(lines)-1])
			}
		}
	}
}

// TestStoppedInJSON: the result line of a timed-out build names the stage it stopped in, for
// machines as for people, and plain output says it in words.
func TestStoppedInJSON(t *testing.T) {
	model := repoModel(t, "convnet.onnx")
	for _, mode := range []string{"json", "plain"} {
		r := trtbuild(t, nil, "--backend", "sim", "--no-timing-cache", "--sim-speed", "1", "--timeout", "2s", "--progress", mode,
			"-o", filepath.Join(t.TempDir(), "m.engine"), model)
		if r.code != 124 {
			t.Fatalf("%s: exit %d, want 124\n%s", mode, r.code, r.stderr)
		}
		if mode == "plain" {
			if !strings.Contains(r.stdout, "\n  Stopped in: ") {
				t.Errorf("plain does not say where the build stopped:\n%s", r.stdout)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		var res struct {
			Status string `json:"status"`
			Where  *struct {
				Path []string `json:"path"`
			} `json:"where"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
			t.Fatal(err)
		}
		if res.Status != "timed_out" || res.Where == nil || len(res.Where.Path) == 0 {
			t.Errorf("the result does not name where the build stopped: %s", lines[len(lines)-1])
		}
	}
}
